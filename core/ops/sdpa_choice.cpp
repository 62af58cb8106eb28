// select_sdp_backend and its checks (cuda/sdp_utils.cpp, sdp_utils_cpp.h), for dense inputs. Each
// check returns the reason it fails, or an empty string; the reasons are PyTorch's warnings in
// short. Not modelled: nested tensors, float8 (FlashAttention 3), ROCm; cuDNN's head dims above
// 128 (256 on sm_90 with cuDNN newer than 9.22, in PyTorch after 2.11) and the memory-efficient
// kernel's storage-offset alignment check (also newer than 2.11).
#include "core/ops/sdpa_choice.h"

#include <algorithm>
#include <cmath>
#include <string_view>

namespace matmulviz {

std::string sdpaBackendName(SdpaBackend b) {
  switch (b) {
    case SdpaBackend::Math:
      return "math";
    case SdpaBackend::Flash:
      return "flash_attention";
    case SdpaBackend::Efficient:
      return "efficient_attention";
    case SdpaBackend::CuDnn:
      return "cudnn_attention";
    case SdpaBackend::Error:
      break;
  }
  return "error";
}

namespace {

using Reason = std::string;

int64_t last(const std::vector<int64_t>& v) {
  return v.empty() ? 0 : v.back();
}

int64_t at(const std::vector<int64_t>& v, int i) {  // i < 0 counts from the end
  const int n = static_cast<int>(v.size());
  const int k = i < 0 ? n + i : i;
  return k >= 0 && k < n ? v[static_cast<size_t>(k)] : 0;
}

bool isHalf(const std::string& dtype) {
  return dtype == "float16" || dtype == "bfloat16";
}

bool inputRequiresGrad(const SdpaCall& c) {  // sdp_utils_cpp.h: input_requires_grad
  return c.gradEnabled && (c.query.requiresGrad || c.key.requiresGrad || c.value.requiresGrad);
}

/// check_tensor_dtype: q, k and v of one dtype among `allowed`.
Reason dtypeIn(const SdpaCall& c, std::initializer_list<std::string_view> allowed,
               std::string_view names) {
  const std::string& t = c.query.dtype;
  const bool ok = t == c.key.dtype && t == c.value.dtype &&
                  std::find(allowed.begin(), allowed.end(), t) != allowed.end();
  return ok ? "" : "needs query, key and value of one dtype among " + std::string(names);
}

Reason fourDims(const SdpaCall& c) {  // check_tensor_shapes
  const bool ok = c.query.sizes.size() == 4 && c.key.sizes.size() == 4 && c.value.sizes.size() == 4;
  return ok ? "" : "needs 4-d query, key and value";
}

/// check_batch_size_and_num_heads_dense<supports_gqa, requires_same_num_heads>.
Reason batchAndHeads(const SdpaCall& c, bool supportsGqa, bool requiresSameNumHeads) {
  const int64_t qb = at(c.query.sizes, 0), kb = at(c.key.sizes, 0), vb = at(c.value.sizes, 0);
  if (qb != kb || qb != vb) return "needs one batch size for query, key and value";
  const int64_t qh = at(c.query.sizes, -3), kh = at(c.key.sizes, -3), vh = at(c.value.sizes, -3);
  if (c.enableGqa && supportsGqa) {  // check_grouped_query_attention
    if (requiresSameNumHeads && kh != vh) return "needs as many key heads as value heads";
    if (kh == 0 || qh % kh != 0 || (!requiresSameNumHeads && (vh == 0 || qh % vh != 0)))
      return "needs query heads a multiple of key and value heads";
    return "";
  }
  return qh == kh && qh == vh ? "" : "needs one number of heads for query, key and value";
}

Reason nonzeroSequences(const SdpaCall& c) {  // check_nonzero_sequence_lengths_dense
  return at(c.query.sizes, -2) != 0 && at(c.key.sizes, -2) != 0 ? "" : "needs non-empty sequences";
}

/// check_last_dim_stride_equals_1_dense<ignore_singleton_dim> (a GPU's mask too).
Reason lastDimContiguous(const SdpaCall& c, bool ignoreSingletonDim) {
  bool qkv = last(c.query.strides) == 1 && last(c.key.strides) == 1 && last(c.value.strides) == 1;
  if (ignoreSingletonDim) qkv = qkv || last(c.query.sizes) == 1;
  const bool mask = !c.attnMask || last(c.attnMask->strides) == 1;
  return qkv && mask ? "" : "needs the last dimension of its inputs to have stride 1";
}

bool smBetween(int major, int minor, int loMajor, int loMinor, int hiMajor, int hiMinor) {
  const int v = major * 10 + minor;
  return v >= loMajor * 10 + loMinor && v <= hiMajor * 10 + hiMinor;
}

/// minimum_gemm_alignment: elements the efficient kernel's head dims must be a multiple of.
int64_t gemmAlignment(const SdpaCall& c, int major) {
  const bool half = isHalf(c.query.dtype);
  const bool tensorCores = major >= 8 || (major >= 7 && half);
  int64_t align = major >= 8 ? 4 : 1;
  if (tensorCores) align = std::max<int64_t>(align, 128 / (half ? 16 : 32));
  return align;
}

/// check_attn_mask_shape (cuDNN): a mask not requiring grad, [L|1, S|1] or [B|1, H|1, L|1, S|1].
Reason maskShape(const SdpaCall& c) {
  if (!c.attnMask) return "";
  const SdpaTensor& m = *c.attnMask;
  if (m.requiresGrad) return "needs an attn_mask that does not require grad";
  const int64_t l = at(c.query.sizes, 2), s = at(c.key.sizes, 2);
  const bool ls = (at(m.sizes, -2) == l || at(m.sizes, -2) == 1) &&
                  (at(m.sizes, -1) == s || at(m.sizes, -1) == 1);
  if (ls && m.sizes.size() == 2) return "";
  if (ls && m.sizes.size() == 4 &&
      (at(m.sizes, 0) == 1 || at(m.sizes, 0) == at(c.query.sizes, 0)) &&
      (at(m.sizes, 1) == 1 || at(m.sizes, 1) == at(c.query.sizes, 1)))
    return "";
  return "needs a 2-d or broadcastable 4-d attn_mask";
}

Reason firstFailing(std::initializer_list<Reason> reasons) {
  for (const Reason& r : reasons)
    if (!r.empty()) return r;
  return "";
}

/// can_use_flash_attention.
Reason flashFails(const SdpaCall& c, int major, int minor, const SdpaSettings& s) {
  if (!s.flash) return "switched off (torch.backends.cuda.enable_flash_sdp)";
  if (Reason r = fourDims(c); !r.empty()) return r;
  if (c.attnMask) return "takes no attn_mask";
  const int64_t e = last(c.query.sizes);
  if (e != last(c.key.sizes) || e != last(c.value.sizes) || e > 256)
    return "needs equal head dims of at most 256";
  if (!smBetween(major, minor, 8, 0, 12, 1)) return "needs sm_80 to sm_121";
  if (inputRequiresGrad(c) &&
      (smBetween(major, minor, 8, 6, 8, 9) || smBetween(major, minor, 12, 0, 12, 1)) &&
      !(e <= 192 || (c.dropoutP <= 0.0 && e > 224)))
    return "cannot train with this head dim on sm_86 to sm_89 or sm_120";
  if (c.isCausal && at(c.query.sizes, -2) != at(c.key.sizes, -2))
    return "takes is_causal only with equal query and key lengths";
  if (Reason r = major >= 8 ? dtypeIn(c, {"float16", "bfloat16"}, "float16, bfloat16")
                            : dtypeIn(c, {"float16"}, "float16");
      !r.empty())
    return r;
  return firstFailing(
      {batchAndHeads(c, true, true), nonzeroSequences(c), lastDimContiguous(c, true)});
}

/// can_use_mem_efficient_attention.
Reason efficientFails(const SdpaCall& c, int major, int minor, const SdpaSettings& s) {
  if (!s.memEfficient) return "switched off (torch.backends.cuda.enable_mem_efficient_sdp)";
  if (!smBetween(major, minor, 5, 0, 12, 1)) return "needs sm_50 to sm_121";
  if (Reason r = fourDims(c); !r.empty()) return r;
  const int64_t align = gemmAlignment(c, major);
  const int64_t e = last(c.query.sizes), ev = last(c.value.sizes);
  if (e != last(c.key.sizes) || e % align != 0 || e <= 0 || ev % align != 0 || ev <= 0)
    return "needs equal query and key head dims, multiples of " + std::to_string(align);
  if (Reason r = firstFailing(
          {nonzeroSequences(c), lastDimContiguous(c, false), batchAndHeads(c, true, true)});
      !r.empty())
    return r;
  return major >= 8 ? dtypeIn(c, {"float16", "float32", "bfloat16"}, "float16, float32, bfloat16")
                    : dtypeIn(c, {"float16", "float32"}, "float16, float32");
}

/// check_cudnn_tensor_shapes.
Reason cudnnShapes(const SdpaCall& c, int major, int minor, const SdpaSettings& s) {
  constexpr int64_t maxDim = 65535;
  if (at(c.query.sizes, 0) > maxDim || at(c.query.sizes, 1) > maxDim)
    return "takes a batch size and heads of at most 65535";
  if (s.cudnnVersion < 8903) return "needs cuDNN 8.9.3";
  if (s.cudnnVersion < 8906 && c.dropoutP != 0.0) return "needs cuDNN 8.9.6 for dropout";
  const int64_t sq = at(c.query.sizes, 2), sk = at(c.key.sizes, 2);
  const int64_t dqk = at(c.query.sizes, 3), dv = at(c.value.sizes, 3);
  const bool sm90or10x = (major == 9 && minor == 0) || major == 10;
  const int64_t limit = sm90or10x && s.cudnnVersion >= 91100 && dqk == 192 && dv == 128 ? 192 : 128;
  if (dqk > limit || dv > limit) return "takes head dims of at most " + std::to_string(limit);
  if (dqk % 8 != 0 || dv % 8 != 0) return "needs head dims that are multiples of 8";
  if (s.cudnnVersion < 8906 && sk % 64 != 0) return "needs key lengths that are multiples of 64";
  if (s.cudnnVersion < 90000 && sq < 64) return "needs query lengths of at least 64";
  if (sk == 1) return "takes no key length of 1";
  if (c.dropoutP != 0.0 && sq == 1) return "takes no query length of 1 with dropout";
  return "";
}

/// can_use_cudnn_attention.
Reason cudnnFails(const SdpaCall& c, int major, int minor, const SdpaSettings& s) {
  if (s.cudnnVersion < 90000) return "needs cuDNN 9";
  if (c.dropoutP > 0.0 && s.cudnnVersion > 91100 && s.cudnnVersion < 91400)
    return "takes no dropout with cuDNN 9.11 to 9.13";
  if (!s.cudnn) return "switched off (torch.backends.cuda.enable_cudnn_sdp)";
  if (Reason r = fourDims(c); !r.empty()) return r;
  if (s.deterministic && !s.deterministicWarnOnly) return "is not deterministic";
  if (Reason r = major >= 8 ? dtypeIn(c, {"float16", "bfloat16"}, "float16, bfloat16")
                            : dtypeIn(c, {"float16"}, "float16");
      !r.empty())
    return r;
  if (Reason r = maskShape(c); !r.empty()) return r;
  if (!smBetween(major, minor, 8, 0, 12, 1)) return "needs sm_80 to sm_121";
  if (c.dropoutP * 16.0 != std::floor(c.dropoutP * 16.0))
    return "takes dropout in steps of 1/16 only";
  return firstFailing({nonzeroSequences(c), lastDimContiguous(c, true),
                       batchAndHeads(c, true, false), cudnnShapes(c, major, minor, s)});
}

/// priority_order: the context's order, or cuDNN first where check_prefer_cudnn_attention says.
std::vector<SdpaBackend> priorityOrder(int major, const SdpaSettings& s) {
  if (!s.priority.empty()) return s.priority;
  if (!s.cudnnDeprioritized && s.cudnnVersion > 91500 && (major == 9 || major == 10))
    return {SdpaBackend::CuDnn, SdpaBackend::Flash, SdpaBackend::Efficient, SdpaBackend::Math};
  return {SdpaBackend::Flash, SdpaBackend::Efficient, SdpaBackend::Math, SdpaBackend::CuDnn};
}

}  // namespace

SdpaChoice selectSdpaBackend(const SdpaCall& call, int major, int minor,
                             const SdpaSettings& settings) {
  SdpaChoice choice;
  if (!settings.math && !settings.flash && !settings.memEfficient && !settings.cudnn) {
    choice.backend = SdpaBackend::Error;
    choice.skipped.push_back("every backend is switched off");
    return choice;
  }
  for (SdpaBackend b : priorityOrder(major, settings)) {
    Reason why;
    switch (b) {
      case SdpaBackend::Flash:
        why = flashFails(call, major, minor, settings);
        break;
      case SdpaBackend::Efficient:
        why = efficientFails(call, major, minor, settings);
        break;
      case SdpaBackend::CuDnn:
        why = cudnnFails(call, major, minor, settings);
        break;
      case SdpaBackend::Math:
        why = settings.math ? "" : "switched off (torch.backends.cuda.enable_math_sdp)";
        break;
      case SdpaBackend::Error:
        continue;
    }
    if (why.empty()) {
      choice.backend = b;
      return choice;
    }
    choice.skipped.push_back(sdpaBackendName(b) + ": " + why);
  }
  choice.backend = SdpaBackend::Error;
  return choice;
}

}  // namespace matmulviz
