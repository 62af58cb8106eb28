#pragma once
// NumPy .npy files (format versions 1.0, 2.0 and 3.0) <-> host tensors. The format is NumPy's
// (numpy/lib/format.py, NEP 1): the magic "\x93NUMPY", a major and a minor version byte, a
// little-endian header length (2 bytes in 1.0, 4 bytes in 2.0/3.0), an ASCII (1.0/2.0) or UTF-8
// (3.0) Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)} padded with
// spaces and ended by '\n', then the raw elements in C (row-major) order.

#include "core/tensor/tensor.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace matmulviz::npy {

/// Any problem reading or writing a .npy file; the message names the file and what is wrong.
class NpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Reads a .npy file into a new contiguous host tensor (row-major, labelled with the file name).
/// Accepted descr: '<f4' float32, '<f2' float16, '<f8' float64, '<i8' int64, '|b1' bool (for
/// the multi-byte types, '=' and '|' byte orders are not accepted; NumPy writes '<' on every
/// little-endian machine; a bool byte other than 0 reads as true). '<V2' (how
/// ml_dtypes' bfloat16 saves) is rejected: NumPy has no bfloat16. 0-d arrays ('shape': ()) and
/// empty dimensions are fine.
/// Throws NpyError naming the file when: it cannot be opened; the magic is not "\x93NUMPY";
/// the version is not 1.0, 2.0 or 3.0; the header is malformed (not a dict with exactly the keys
/// descr, fortran_order, shape); the byte order is '>' (big-endian); the dtype is unsupported;
/// fortran_order is True; the shape's strides (in bytes, empty dimensions counted as 1) would
/// overflow int64; the data is shorter than shape x element size (truncated) or longer
/// (trailing bytes).
Tensor read(const std::string& path);

/// read(), then checks the result for the input a front end calls `label` (the CLI passes its
/// option, e.g. "--a"; core itself names no option): its dtype
/// must be one of `allowed` (the caller may convert afterwards), and when `expectedShape` is not
/// empty the file's shape must have its rank and match every non-negative entry (-1 = any size;
/// an empty `expectedShape` accepts any shape, a 0-d one included).
/// Throws NpyError whose message starts with `label`, e.g. "--a: 'a.npy': expected shape
/// [131072, 1, 64] but the file has [2, 3]"; errors of read() are re-thrown with that prefix.
Tensor readChecked(const std::string& path, const std::string& label,
                   const std::vector<DType>& allowed,
                   const std::vector<int64_t>& expectedShape = {});

/// Writes a tensor with host-readable data (device kind Host or Cpu; any strides: a
/// non-contiguous tensor is written in its logical row-major order) as .npy version 1.0, or 2.0
/// when the header exceeds 65535 bytes, with the header padded to a multiple of 64 bytes as
/// NumPy does. bfloat16 has no NumPy dtype: it is written as float32 ('<f4'), exactly (every
/// bfloat16 value is a float32). Other dtypes are written as they are.
/// Writes to `path` + ".tmp", then renames it to `path`, so a failed write never leaves a
/// partial file at `path` (and the .tmp is removed). Creates no directories.
/// Throws NpyError naming the file on I/O errors, and for meta or CUDA tensors (no host data).
void write(const std::string& path, const Tensor& t);

}  // namespace matmulviz::npy
