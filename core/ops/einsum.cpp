// torch.einsum, following aten/src/ATen/native/Linear.cpp (einsum and sumproduct_pair, the
// default left-to-right contraction path): parse, align every operand to one dim order
// (output dims, then contracted dims) with views, then contract pairwise through bmm.
#include "core/ops/einsum.h"

#include "core/ops/ops.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <numeric>
#include <stdexcept>

namespace matmulviz {

namespace {

constexpr int kLetters = 26;
constexpr int kTotalLabels = 2 * kLetters;
constexpr uint8_t kEllipsis = kTotalLabels;

[[noreturn]] void fail(const std::string& msg) {
  throw std::invalid_argument("einsum(): " + msg);
}

uint8_t toSubscript(unsigned char c) {
  return static_cast<uint8_t>(std::isupper(c) ? c - 'A' : c - 'a' + kLetters);
}
char toLabel(int s) {
  return static_cast<char>(s < kLetters ? s + 'A' : s - kLetters + 'a');
}

/// The parsed equation: labels per operand (kEllipsis for "..."), counts, ellipsis width.
struct Parsed {
  std::vector<std::vector<uint8_t>> opLabels;
  std::vector<int64_t> labelCount = std::vector<int64_t>(kTotalLabels, 0);
  int64_t ellNumDim = 0;
};

Parsed parseInputs(const std::string& lhs, const std::vector<Tensor>& operands) {
  const size_t numOps = operands.size();
  Parsed p;
  p.opLabels.resize(numOps);
  bool ellInInput = false;
  size_t cur = 0;
  for (size_t i = 0; i < lhs.size(); ++i) {
    const auto c = static_cast<unsigned char>(lhs[i]);
    if (c == ' ') continue;
    if (c == '.') {
      if (ellInInput)
        fail("found '.' for operand " + std::to_string(cur) +
             " for which an ellipsis was already found");
      if (!(i + 2 < lhs.size() && lhs[++i] == '.' && lhs[++i] == '.'))
        fail("found '.' for operand " + std::to_string(cur) + " that is not part of any ellipsis");
      p.opLabels[cur].push_back(kEllipsis);
      ellInInput = true;
    } else if (c == ',') {
      if (++cur >= numOps) fail("fewer operands were provided than specified in the equation");
      ellInInput = false;
    } else {
      if (!std::isalpha(c))
        fail("invalid subscript given at index " + std::to_string(i) +
             " in the equation string, subscripts must be in [a-zA-Z]");
      p.opLabels[cur].push_back(toSubscript(c));
    }
  }
  if (cur != numOps - 1) fail("more operands were provided than specified in the equation");
  for (size_t i = 0; i < numOps; ++i) {
    const int64_t ndims = operands[i].dim();
    auto nlabels = static_cast<int64_t>(p.opLabels[i].size());
    bool hasEllipsis = false;
    for (uint8_t s : p.opLabels[i]) {
      if (s == kEllipsis) {
        --nlabels;
        hasEllipsis = true;
        p.ellNumDim = std::max(p.ellNumDim, ndims - nlabels);
      } else {
        ++p.labelCount[s];
      }
    }
    if (hasEllipsis ? nlabels > ndims : nlabels != ndims)
      fail("the number of subscripts in the equation (" + std::to_string(nlabels) +
           (hasEllipsis ? ") is more than the number of dimensions ("
                        : ") does not match the number of dimensions (") +
           std::to_string(ndims) + ") for operand " + std::to_string(i) +
           (hasEllipsis ? "" : " and no ellipsis was given"));
  }
  return p;
}

/// Where each label goes in the aligned dim order: output dims first, then contracted ones.
struct Layout {
  std::vector<int64_t> labelPermIndex = std::vector<int64_t>(kTotalLabels, -1);
  int64_t permIndex = 0, outNumDim = 0, ellIndex = 0;
};

Layout layoutOf(const Parsed& p, const std::string& equation, size_t arrow, size_t lhsSize) {
  Layout l;
  bool ellInOutput = false;
  if (arrow == std::string::npos) {
    l.permIndex = p.ellNumDim;
    ellInOutput = true;
    for (int s = 0; s < kTotalLabels; ++s)
      if (p.labelCount[s] == 1) l.labelPermIndex[s] = l.permIndex++;
  } else {
    const std::string rhs = equation.substr(arrow + 2);
    for (size_t i = 0; i < rhs.size(); ++i) {
      const auto c = static_cast<unsigned char>(rhs[i]);
      if (c == ' ') continue;
      if (c == '.') {
        if (ellInOutput) fail("found '.' for output but an ellipsis (...) was already found");
        if (!(i + 2 < rhs.size() && rhs[++i] == '.' && rhs[++i] == '.'))
          fail("found '.' for output that is not part of any ellipsis (...)");
        l.ellIndex = l.permIndex;
        l.permIndex += p.ellNumDim;
        ellInOutput = true;
        continue;
      }
      if (!std::isalpha(c))
        fail("invalid subscript given at index " + std::to_string(lhsSize + 2 + i) +
             " in the equation string, subscripts must be in [a-zA-Z]");
      const uint8_t s = toSubscript(c);
      if (p.labelCount[s] == 0 || l.labelPermIndex[s] != -1)
        fail(std::string("output subscript ") + static_cast<char>(c) +
             (l.labelPermIndex[s] > -1 ? " appears more than once in the output"
                                       : " does not appear in the equation for any input operand"));
      l.labelPermIndex[s] = l.permIndex++;
    }
  }
  l.outNumDim = l.permIndex;
  if (!ellInOutput) {
    l.ellIndex = l.permIndex;
    l.permIndex += p.ellNumDim;
  }
  for (int s = 0; s < kTotalLabels; ++s)
    if (p.labelCount[s] > 0 && l.labelPermIndex[s] == -1) l.labelPermIndex[s] = l.permIndex++;
  return l;
}

/// t.movedim(from, to) as a permute.
Tensor movedim(const Tensor& t, int64_t from, int64_t to) {
  std::vector<int64_t> order(static_cast<size_t>(t.dim()));
  std::iota(order.begin(), order.end(), int64_t{0});
  order.erase(order.begin() + from);
  order.insert(order.begin() + to, from);
  return permute(t, order);
}

/// Operand i with diagonals taken, missing dims unsqueezed and dims permuted to the layout.
Tensor alignOperand(const Tensor& operand, size_t i, const Parsed& p, const Layout& l,
                    std::vector<int64_t>& labelSize, std::vector<int64_t>& ellSizes,
                    std::vector<int64_t>& dimCounts) {
  Tensor op = operand;
  std::vector<int64_t> perm(static_cast<size_t>(l.permIndex), -1);
  int64_t dim = 0;
  const std::string opName = std::to_string(i);
  for (uint8_t s : p.opLabels[i]) {
    if (s == kEllipsis) {
      const int64_t ndim = operand.dim() - (static_cast<int64_t>(p.opLabels[i].size()) - 1);
      for (int64_t j = p.ellNumDim - ndim; j < p.ellNumDim; ++j) {
        if (op.size(dim) != 1) {
          if (ellSizes[j] != 1 && ellSizes[j] != op.size(dim))
            fail("dimension " + std::to_string(dim) + " covered by ellipsis in operand " + opName +
                 " has size " + std::to_string(op.size(dim)) +
                 " which does not broadcast with previously seen ellipsis with size " +
                 std::to_string(ellSizes[j]) + " for the respective dimension");
          ellSizes[j] = op.size(dim);
          ++dimCounts[l.ellIndex + j];
        }
        perm[l.ellIndex + j] = dim++;
      }
    } else if (perm[l.labelPermIndex[s]] == -1) {
      if (op.size(dim) != 1) {
        if (labelSize[s] != 1 && labelSize[s] != op.size(dim))
          fail(std::string("subscript ") + toLabel(s) + " has size " +
               std::to_string(op.size(dim)) + " for operand " + opName +
               " which does not broadcast with previously seen size " +
               std::to_string(labelSize[s]));
        labelSize[s] = op.size(dim);
        ++dimCounts[l.labelPermIndex[s]];
      }
      perm[l.labelPermIndex[s]] = dim++;
    } else {
      const int64_t prev = perm[l.labelPermIndex[s]];
      if (op.size(dim) != op.size(prev))
        fail(std::string("subscript ") + toLabel(s) + " is repeated for operand " + opName +
             " but the sizes don't match, " + std::to_string(op.size(dim)) +
             " != " + std::to_string(op.size(prev)));
      const Tensor diag = diagonal(op, prev, dim);  // the diagonal is its last dim
      op = movedim(diag, diag.dim() - 1, prev);
    }
  }
  for (int64_t& v : perm)
    if (v == -1) {
      op = unsqueeze(op, dim);
      v = dim++;
    }
  return permute(op, perm);
}

/// (left * right).sum(sumDims, keepdim) through permute, reshape and one bmm
/// (sumproduct_pair). Operands have the same number of dims (broadcast by size 1).
Tensor sumproductPair(Tensor left, Tensor right, const std::vector<int64_t>& summed) {
  if (summed.empty()) return mul(left, right);
  const int64_t dim = left.dim();
  std::vector<bool> isSum(static_cast<size_t>(dim), false);
  for (int64_t d : summed) isSum[d] = true;
  std::vector<int64_t> lro, lo, ro;
  int64_t lroSize = 1, loSize = 1, roSize = 1, sumSize = 1;
  for (int64_t i = 0; i < dim; ++i) {
    const bool sl = left.size(i) != 1, sr = right.size(i) != 1;
    if (isSum[i]) {
      if (sl && sr) {
        if (left.size(i) != right.size(i)) fail("non-broadcast dimensions must match");
        sumSize *= left.size(i);
      } else if (sl) {
        left = sumDims(left, {i}, true);
      } else if (sr) {
        right = sumDims(right, {i}, true);
      }
    } else if (sl && sr) {
      if (left.size(i) != right.size(i)) fail("non-broadcast dimensions must match");
      lro.push_back(i);
      lroSize *= left.size(i);
    } else if (sl) {
      lo.push_back(i);
      loSize *= left.size(i);
    } else {
      ro.push_back(i);
      roSize *= right.size(i);
    }
  }
  Shape outSize;
  for (int64_t d : lro) outSize.push_back(left.size(d));
  for (int64_t d : lo) outSize.push_back(left.size(d));
  for (size_t k = 0; k < summed.size(); ++k) outSize.push_back(1);
  for (int64_t d : ro) outSize.push_back(right.size(d));
  auto joined = [](std::initializer_list<const std::vector<int64_t>*> parts) {
    std::vector<int64_t> v;
    for (const auto* part : parts) v.insert(v.end(), part->begin(), part->end());
    return v;
  };
  const auto lperm = joined({&lro, &lo, &summed, &ro});
  const auto rperm = joined({&lro, &summed, &ro, &lo});
  std::vector<int64_t> operm(static_cast<size_t>(dim));
  for (size_t k = 0; k < lperm.size(); ++k) operm[lperm[k]] = static_cast<int64_t>(k);
  left = reshape(permute(left, lperm), {lroSize, loSize, sumSize});
  right = reshape(permute(right, rperm), {lroSize, sumSize, roSize});
  return permute(view(bmm(left, right), outSize), operm);
}

/// Contracts the aligned operands left to right; returns the result with the output dims.
Tensor contract(std::deque<Tensor> ops, const Layout& l, std::vector<int64_t> dimCounts) {
  while (ops.size() > 1) {
    Tensor a = ops[0], b = ops[1];
    ops.pop_front();
    ops.pop_front();
    std::vector<int64_t> sumDimsNow, aDims, bDims;
    for (int64_t d = l.outNumDim; d < l.permIndex; ++d) {
      if (a.size(d) != 1 && b.size(d) != 1) {
        if (--dimCounts[d] == 1) {
          sumDimsNow.push_back(d);
          dimCounts[d] = 0;
        }
      } else if (dimCounts[d] == 1) {
        if (a.size(d) != 1) {
          aDims.push_back(d);
          dimCounts[d] = 0;
        } else if (b.size(d) != 1) {
          bDims.push_back(d);
          dimCounts[d] = 0;
        }
      }
    }
    if (!aDims.empty()) a = sumDims(a, aDims, true);
    if (!bDims.empty()) b = sumDims(b, bDims, true);
    ops.push_front(sumproductPair(a, b, sumDimsNow));
  }
  return ops[0];
}

}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  if (operands.empty()) fail("must provide at least one operand");
  for (const Tensor& t : operands)
    if (t.dtype() != operands[0].dtype() || t.device() != operands[0].device())
      throw std::invalid_argument(
          "einsum(): expected all operands to have the same dtype and device");
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  const Parsed p = parseInputs(lhs, operands);
  const Layout l = layoutOf(p, equation, arrow, lhs.size());
  std::vector<int64_t> labelSize(kTotalLabels, 1), ellSizes(static_cast<size_t>(p.ellNumDim), 1);
  std::vector<int64_t> dimCounts(static_cast<size_t>(l.permIndex), 0);
  std::deque<Tensor> ops;
  for (size_t i = 0; i < operands.size(); ++i)
    ops.push_back(alignOperand(operands[i], i, p, l, labelSize, ellSizes, dimCounts));
  OpScope scope(operands[0].device(), "einsum");
  Tensor result = contract(std::move(ops), l, std::move(dimCounts));
  if (l.permIndex - l.outNumDim == 0) return result;
  if (operands.size() > 1) {
    Shape sizes = result.sizes();
    sizes.erase(sizes.begin() + l.outNumDim, sizes.end());
    return view(result, sizes);
  }
  std::vector<int64_t> dims(static_cast<size_t>(l.permIndex - l.outNumDim));
  std::iota(dims.begin(), dims.end(), l.outNumDim);
  return sumDims(result, dims, false);
}

}  // namespace matmulviz
