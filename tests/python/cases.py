"""The cases that compare matmulviz.torch with the real PyTorch.

CASES is a list of (name, code) pairs. Each code snippet is plain PyTorch: it may use the
names `torch` (the module under test: the real torch when the golden is written,
matmulviz.torch when it is checked) and `DEV` (a device string: "cpu" for the golden; the
test runs every case with "cpu" and with "cuda"). It builds its inputs deterministically
(arange, tensor literals, never random values) and assigns `result`: a tensor, a number, a
bool, a string, or a tuple/list of those.

A case may also raise: the golden then records the exception's type and the first line of
its message, and the module under test must raise the same.

Rules that keep the golden valid for both devices:
- nothing in a result may depend on the device (no str(t.device), no data_ptr() values);
- no float16 math beyond + - * and sum (PyTorch's CPU build has no float16 cos, exp, relu,
  softmax or matmul, and would record an error that a CUDA run never raises); bfloat16 is
  used for 16-bit math instead;
- a case that turns grad mode off turns it back on.

Every snippet is dedented, so it can be written as an indented triple-quoted string.
"""

import textwrap

CASES = []


def case(name, code):
    CASES.append((name, textwrap.dedent(code).strip() + "\n"))


def view_case(name, setup, expr):
    """A view or copy of `x`: the tensor, its strides, offset and contiguity."""
    case(name, f"""
        x = {setup}
        y = {expr}
        result = (y, y.stride(), y.storage_offset(), y.is_contiguous())
    """)


X34 = "torch.arange(12., device=DEV).view(3, 4)"
X234 = "torch.arange(24., device=DEV).view(2, 3, 4)"

# ---------------------------------------------------------------------------------------------
# Creation
# ---------------------------------------------------------------------------------------------
case("tensor_float_nested", "result = torch.tensor([[1.0, 2.5], [3.0, -4.0]], device=DEV)")
case("tensor_int_list", "result = torch.tensor([1, 2, 3], device=DEV)")
case("tensor_bool_list", "result = torch.tensor([True, False, True], device=DEV)")
case("tensor_mixed_int_float", "result = torch.tensor([1, 2.5], device=DEV)")
case("tensor_scalar_0d", "result = torch.tensor(3.5, device=DEV)")
case("tensor_dtype_kw", "result = torch.tensor([1, 2], dtype=torch.float16, device=DEV)")
case("tensor_bfloat16_rounds", "result = torch.tensor([0.1, 1.0 / 3.0, 300.7], dtype=torch.bfloat16, device=DEV)")
case("tensor_float64", "result = torch.tensor([0.1, 0.2], dtype=torch.float64, device=DEV)")
case("tensor_requires_grad_kw", "result = torch.tensor([1.0, 2.0], requires_grad=True, device=DEV)")
case("tensor_ragged_error", "result = torch.tensor([[1, 2], [3]], device=DEV)")
case("tensor_int_requires_grad_error",
     "result = torch.tensor([1, 2], requires_grad=True, device=DEV)")
case("zeros_varargs", "result = torch.zeros(2, 3, device=DEV)")
case("zeros_list_dtype", "result = torch.zeros([2, 3], dtype=torch.int64, device=DEV)")
case("zeros_tuple_bool", "result = torch.zeros((2,), dtype=torch.bool, device=DEV)")
case("zeros_empty_dim", "result = torch.zeros(0, 3, device=DEV)")
case("zeros_negative_size_error", "result = torch.zeros(2, -1, device=DEV)")
case("ones_varargs", "result = torch.ones(2, 2, device=DEV)")
case("ones_bool", "result = torch.ones(3, dtype=torch.bool, device=DEV)")
case("ones_half", "result = torch.ones((2, 1), dtype=torch.half, device=DEV)")
case("empty_shape_only", """
    x = torch.empty(2, 3, device=DEV)
    result = (x.shape, str(x.dtype), x.stride(), x.is_contiguous())
""")
case("empty_dtype", """
    x = torch.empty((4,), dtype=torch.int64, device=DEV)
    result = (x.shape, str(x.dtype))
""")
case("full_float", "result = torch.full((2, 2), 7.5, device=DEV)")
case("full_int_infers_long", "result = torch.full((3,), 2, device=DEV)")
case("full_bool", "result = torch.full((2,), True, device=DEV)")
case("full_dtype", "result = torch.full((2,), 3, dtype=torch.float32, device=DEV)")
case("arange_end", "result = torch.arange(5, device=DEV)")
case("arange_float_end", "result = torch.arange(4., device=DEV)")
case("arange_start_end_step", "result = torch.arange(1, 4, 0.5, device=DEV)")
case("arange_negative_step", "result = torch.arange(5, 0, -2, device=DEV)")
case("arange_dtype", "result = torch.arange(3, dtype=torch.float16, device=DEV)")
case("arange_zero_step_error", "result = torch.arange(0, 3, 0, device=DEV)")
case("rand_shape_dtype_range", """
    x = torch.rand(2, 3, device=DEV)
    v = x.reshape(-1).tolist()
    result = (x.shape, str(x.dtype), all(0.0 <= u < 1.0 for u in v), x.requires_grad)
""")
case("rand_list_size_dtype", """
    x = torch.rand([4], dtype=torch.float64, device=DEV)
    result = (x.shape, str(x.dtype))
""")
case("randn_shape_dtype", """
    x = torch.randn(3, 2, device=DEV)
    result = (x.shape, str(x.dtype), x.is_contiguous())
""")
case("randint_low_high", """
    x = torch.randint(2, 5, (20,), device=DEV)
    result = (x.shape, str(x.dtype), all(2 <= v < 5 for v in x.tolist()))
""")
case("randint_high_only", """
    x = torch.randint(3, (2, 4), device=DEV)
    result = (x.shape, str(x.dtype), all(0 <= v < 3 for v in x.reshape(-1).tolist()))
""")
case("randint_dtype", """
    x = torch.randint(0, 2, (3,), dtype=torch.float32, device=DEV)
    result = (x.shape, str(x.dtype))
""")
case("manual_seed_repeats", """
    torch.manual_seed(7)
    a = torch.rand(4, device=DEV).tolist()
    b = torch.randn(2, device=DEV).tolist()
    torch.manual_seed(7)
    result = (a == torch.rand(4, device=DEV).tolist(), b == torch.randn(2, device=DEV).tolist())
""")
case("from_numpy_float32", """
    import numpy as np
    result = torch.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3)).to(DEV)
""")
case("from_numpy_int64_float64", """
    import numpy as np
    a = torch.from_numpy(np.array([3, -1], dtype=np.int64))
    b = torch.from_numpy(np.array([0.1, 0.2]))
    result = (a, b)
""")
case("from_numpy_shares_memory", """
    import numpy as np
    a = np.zeros(3, dtype=np.float32)
    t = torch.from_numpy(a)
    a[1] = 5.0
    t[2] = 7.0
    result = (t, a.tolist())
""")
case("from_numpy_strided", """
    import numpy as np
    a = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]
    t = torch.from_numpy(a)
    result = (t, t.stride(), t.is_contiguous())
""")
case("numpy_roundtrip", """
    n = torch.arange(4., device=DEV).view(2, 2).cpu().numpy()
    result = (str(n.dtype), list(n.shape), n.tolist())
""")
case("numpy_int64_bool", """
    a = torch.tensor([1, 2], device=DEV).cpu().numpy()
    b = torch.tensor([True, False], device=DEV).cpu().numpy()
    result = (str(a.dtype), a.tolist(), str(b.dtype), b.tolist())
""")
case("numpy_requires_grad_error", "result = torch.ones(2, requires_grad=True).numpy()")
case("tolist_nested", "result = torch.arange(6, device=DEV).view(2, 3).tolist()")
case("tolist_float_0d", "result = torch.tensor(2.5, device=DEV).tolist()")
case("tolist_bool", "result = torch.tensor([True, False], device=DEV).tolist()")
case("item_float", "result = torch.tensor([2.5], device=DEV).item()")
case("item_int", "result = torch.tensor([[7]], device=DEV).item()")
case("item_bool", "result = torch.tensor(True, device=DEV).item()")
case("item_many_elements_error", "result = torch.tensor([1.0, 2.0], device=DEV).item()")

# ---------------------------------------------------------------------------------------------
# dtypes and conversions
# ---------------------------------------------------------------------------------------------
case("dtype_aliases", """
    result = [torch.float is torch.float32, torch.half is torch.float16,
              torch.double is torch.float64, torch.long is torch.int64,
              str(torch.bfloat16), str(torch.bool), str(torch.float), str(torch.long)]
""")
case("default_dtypes", """
    result = [str(torch.tensor([1.0], device=DEV).dtype), str(torch.tensor([1], device=DEV).dtype),
              str(torch.zeros(1, device=DEV).dtype), str(torch.arange(2, device=DEV).dtype),
              str(torch.arange(2.0, device=DEV).dtype)]
""")
case("to_dtype_float", "result = torch.arange(4, device=DEV).to(torch.float32)")
case("to_dtype_same_is_self", """
    x = torch.arange(4., device=DEV)
    result = x.to(torch.float32) is x
""")
case("to_device_same_is_self", """
    x = torch.arange(4., device=DEV)
    result = x.to(DEV) is x
""")
case("to_device_and_dtype", "result = torch.arange(3, device=DEV).to(DEV, torch.float16)")
case("to_cpu_roundtrip", """
    x = torch.arange(3., device=DEV) * 2
    y = x.to("cpu")
    result = (y, y.device.type)
""")
case("cuda_or_to_device", """
    x = torch.arange(3.)
    y = x.cuda() if DEV == "cuda" else x.to(DEV)
    z = y.cpu()
    result = (y, y.device.type == DEV, z, z.device.type, z.cpu() is z)
""")
case("float_from_long", "result = torch.tensor([1, -2, 3], device=DEV).float()")
case("long_truncates", "result = torch.tensor([1.7, -1.7, 2.5, -0.5], device=DEV).long()")
case("half_rounds_and_overflows",
     "result = torch.tensor([0.1, 1.0 / 3.0, 65504.0, 70000.0, -1e-8], device=DEV).half()")
case("half_to_float", "result = torch.tensor([0.1, 2049.0], device=DEV).half().float()")
case("to_bfloat16", "result = torch.tensor([0.1, 257.0, -3.3], device=DEV).to(torch.bfloat16)")
case("to_float64", "result = torch.tensor([0.1], device=DEV).to(torch.float64)")
case("to_bool", "result = torch.tensor([0.0, -0.5, 2.0], device=DEV).to(torch.bool)")
case("bool_to_float", "result = torch.tensor([True, False], device=DEV).float()")
case("to_keeps_grad_graph", """
    x = torch.tensor([1.0, 2.0], device=DEV, requires_grad=True)
    y = x.to(torch.float64)
    result = (y.requires_grad, y.grad_fn.name(), y.is_leaf)
""")
case("promote_long_plus_float_scalar", "result = torch.arange(3, device=DEV) + 1.5")
case("promote_long_plus_int_scalar", "result = torch.arange(3, device=DEV) + 2")
case("promote_long_div_long", "result = torch.arange(4, device=DEV) / torch.tensor([2, 2, 2, 2], device=DEV)")
case("promote_half_plus_float", """
    result = torch.ones(2, dtype=torch.half, device=DEV) + torch.ones(2, device=DEV)
""")
case("promote_half_times_python_float", """
    result = torch.tensor([1.0, 3.0], dtype=torch.half, device=DEV) * 0.1
""")
case("promote_bool_plus_long", """
    result = torch.tensor([True, False], device=DEV) + torch.tensor([1, 1], device=DEV)
""")
case("promote_float_plus_double_0d", """
    result = torch.ones(2, device=DEV) + torch.tensor(1.5, dtype=torch.float64, device=DEV)
""")

# ---------------------------------------------------------------------------------------------
# Views and copies
# ---------------------------------------------------------------------------------------------
view_case("view_2d", X34, "x.view(4, 3)")
view_case("view_infer", X34, "x.view(2, -1, 2)")
view_case("view_flat", X34, "x.view(-1)")
view_case("view_tuple_arg", X34, "x.view((6, 2))")
view_case("view_of_slice", X34, "x[1:].view(2, 2, 2)")
case("view_size_mismatch_error", f"x = {X34}\nresult = x.view(5, 3)")
case("view_two_infer_error", f"x = {X34}\nresult = x.view(-1, -1)")
case("view_noncontiguous_error", f"x = {X34}\nresult = x.t().view(12)")
view_case("reshape_is_view", X34, "x.reshape(2, 6)")
view_case("reshape_copies", X34, "x.t().reshape(-1)")
case("reshape_view_shares", f"""
    x = {X34}
    y = x.reshape(2, 6)
    y[0, 0] = 100.0
    z = x.t().reshape(12)
    z[0] = -1.0
    result = x
""")
case("reshape_error", f"x = {X34}\nresult = x.reshape(5, -1)")
view_case("permute_3d", X234, "x.permute(2, 0, 1)")
view_case("permute_negative", X234, "x.permute(-1, -3, -2)")
case("permute_wrong_len_error", f"x = {X234}\nresult = x.permute(1, 0)")
case("permute_repeated_error", f"x = {X234}\nresult = x.permute(0, 0, 1)")
view_case("transpose_2d", X34, "x.transpose(0, 1)")
view_case("transpose_neg", X234, "x.transpose(-1, -2)")
case("transpose_dim_error", f"x = {X34}\nresult = x.transpose(0, 2)")
view_case("t_2d", X34, "x.t()")
view_case("t_1d", "torch.arange(3., device=DEV)", "x.t()")
case("t_3d_error", f"x = {X234}\nresult = x.t()")
view_case("mT_3d", X234, "x.mT")
view_case("mT_2d", X34, "x.mT")
view_case("expand_column", "torch.arange(3., device=DEV).view(3, 1)", "x.expand(3, 4)")
view_case("expand_minus_one", "torch.arange(3., device=DEV).view(3, 1)", "x.expand(2, -1, 2)")
view_case("expand_list", "torch.arange(2., device=DEV)", "x.expand([3, 2])")
case("expand_error", "x = torch.arange(3., device=DEV)\nresult = x.expand(2, 4)")
view_case("unsqueeze_0", X34, "x.unsqueeze(0)")
view_case("unsqueeze_mid", X34, "x.unsqueeze(1)")
view_case("unsqueeze_last", X34, "x.unsqueeze(-1)")
case("unsqueeze_dim_error", f"x = {X34}\nresult = x.unsqueeze(3)")
view_case("squeeze_all", "torch.arange(3., device=DEV).view(1, 3, 1)", "x.squeeze()")
view_case("squeeze_dim", "torch.arange(3., device=DEV).view(1, 3, 1)", "x.squeeze(0)")
view_case("squeeze_dim_not_one", "torch.arange(3., device=DEV).view(1, 3, 1)", "x.squeeze(1)")
view_case("squeeze_neg", "torch.arange(3., device=DEV).view(1, 3, 1)", "x.squeeze(-1)")
view_case("flatten_all", X234, "x.flatten()")
view_case("flatten_start", X234, "x.flatten(1)")
view_case("flatten_range", X234, "x.flatten(0, 1)")
view_case("flatten_noncontiguous", X234, "x.transpose(0, 1).flatten()")
view_case("flatten_0d", "torch.tensor(5.0, device=DEV)", "x.flatten()")
view_case("contiguous_of_t", X34, "x.t().contiguous()")
case("contiguous_is_self", f"x = {X34}\nresult = x.contiguous() is x")
view_case("clone_keeps_strides", X34, "x.t().clone()")
view_case("clone_of_gap_slice", X34, "x[:, ::2].clone()")
case("clone_is_copy", f"""
    x = {X34}
    y = x.clone()
    y[0, 0] = 50.0
    result = (x[0, 0].item(), y[0, 0].item())
""")
case("detach_shares", """
    x = torch.arange(3., device=DEV).requires_grad_()
    y = x.detach()
    y[0] = 9.0
    result = (y.requires_grad, y.is_leaf, y.grad_fn is None, x.detach().tolist())
""")
view_case("narrow_cols", X34, "x.narrow(1, 1, 2)")
view_case("narrow_rows_neg", X34, "x.narrow(-2, 1, 2)")
case("narrow_error", f"x = {X34}\nresult = x.narrow(1, 3, 2)")
view_case("select_col", X34, "x.select(1, 2)")
view_case("select_neg_index", X234, "x.select(0, -1)")
case("select_error", f"x = {X34}\nresult = x.select(0, 5)")
case("select_dim_error", f"x = {X34}\nresult = x.select(2, 0)")
case("split_size", f"""
    x = {X34}
    parts = x.split(3, dim=1)
    result = [(p, p.stride(), p.storage_offset()) for p in parts]
""")
case("split_sizes_list", f"""
    x = {X34}
    parts = x.split([1, 3], dim=1)
    result = [(p, p.storage_offset()) for p in parts]
""")
case("split_default_dim", f"x = {X34}\nresult = list(x.split(2))")
case("split_sizes_error", f"x = {X34}\nresult = x.split([1, 2], dim=1)")
case("chunk_even", f"x = {X34}\nresult = list(x.chunk(2, dim=1))")
case("chunk_uneven", "result = list(torch.arange(4., device=DEV).chunk(3))")
case("chunk_more_than_size", "result = list(torch.arange(2., device=DEV).chunk(5))")
case("chunk_zero_error", "result = torch.arange(2., device=DEV).chunk(0)")

# ---------------------------------------------------------------------------------------------
# __getitem__
# ---------------------------------------------------------------------------------------------
view_case("getitem_int", X34, "x[1]")
view_case("getitem_neg_int", X34, "x[-1]")
view_case("getitem_two_ints", X34, "x[1, 2]")
view_case("getitem_slice", X34, "x[1:3]")
view_case("getitem_col_slice", X34, "x[:, 1:3]")
view_case("getitem_step", X34, "x[::2, 1::2]")
view_case("getitem_slice_clamped", X34, "x[1:100, -100:2]")
view_case("getitem_empty_slice", X34, "x[2:1]")
view_case("getitem_forum_slice", X234, "x[1:2, :, :]")
view_case("getitem_none", X34, "x[None]")
view_case("getitem_none_mid", X34, "x[:, None, 1]")
view_case("getitem_ellipsis", X234, "x[..., 1]")
view_case("getitem_ellipsis_mid", X234, "x[0, ..., 0:2]")
view_case("getitem_none_ellipsis_none", X34, "x[None, ..., None]")
view_case("getitem_int_tensor", X34, "x[torch.tensor([2, 0, 2], device=DEV)]")
view_case("getitem_cpu_index_on_dev", X234, "x[torch.tensor([1, 0, 1, 1])]")
view_case("getitem_list_index", X34, "x[[0, 2]]")
view_case("getitem_two_index_tensors", X34,
          "x[torch.tensor([0, 2], device=DEV), torch.tensor([1, 3], device=DEV)]")
view_case("getitem_broadcast_indices", X34,
          "x[torch.tensor([[0], [2]], device=DEV), torch.tensor([1, 3], device=DEV)]")
view_case("getitem_slice_then_index", X34, "x[:, torch.tensor([3, 0, 0], device=DEV)]")
view_case("getitem_index_split_by_slice", X234,
          "x[torch.tensor([1, 0], device=DEV), :, torch.tensor([2, 3], device=DEV)]")
view_case("getitem_2d_index_tensor", X34, "x[torch.tensor([[0, 1], [2, 2]], device=DEV)]")
view_case("getitem_negative_index_tensor", X34, "x[torch.tensor([-1, 0], device=DEV)]")
view_case("getitem_forum_gather", "torch.arange(24., device=DEV).view(3, 2, 4)",
          "x[torch.tensor([2, 0, 2, 1])][1, :, :]")
view_case("getitem_bool_mask_rows", X34, "x[torch.tensor([True, False, True], device=DEV)]")
view_case("getitem_bool_mask_full", X34,
          "x[torch.tensor([[True, False, False, True]] * 3, device=DEV)]")
view_case("getitem_bool_mask_3d_leading", X234,
          "x[torch.tensor([[True, False, True], [False, False, True]], device=DEV)]")
view_case("getitem_bool_mask_none_true", X34, "x[torch.tensor([False, False, False], device=DEV)]")
view_case("getitem_mask_from_comparison", X34, "x[x > 5]")
case("getitem_int_out_of_range_error", f"x = {X34}\nresult = x[3]")
case("getitem_neg_out_of_range_error", f"x = {X34}\nresult = x[0, -5]")
case("getitem_too_many_indices_error", f"x = {X34}\nresult = x[0, 0, 0]")
case("getitem_index_tensor_out_of_range_error",
     f"x = {X34}\nresult = x[torch.tensor([0, 5], device=DEV)]")
case("getitem_float_index_error", f"x = {X34}\nresult = x[torch.tensor([0.0], device=DEV)]")
case("getitem_mask_shape_error",
     f"x = {X34}\nresult = x[torch.tensor([True, False], device=DEV)]")
case("getitem_negative_step_error", f"x = {X34}\nresult = x[::-1]")
case("getitem_index_shape_mismatch_error", f"""
    x = {X34}
    result = x[torch.tensor([0, 1], device=DEV), torch.tensor([0, 1, 2], device=DEV)]
""")

# ---------------------------------------------------------------------------------------------
# __setitem__
# ---------------------------------------------------------------------------------------------
case("setitem_lesson_element", """
    c = torch.zeros(2, 3, device=DEV)
    tmp = torch.tensor(1.5, device=DEV) * 2
    c[1, 2] = tmp
    c[0, 1] = 4.0
    result = c
""")
case("setitem_flat_index", """
    out = torch.zeros(2, 3, device=DEV)
    flat = out.flatten()
    r, w, col = 1, 3, 2
    flat[r * w + col] = 8.0
    result = out
""")
case("setitem_row_tensor", """
    c = torch.zeros(2, 3, device=DEV)
    c[0] = torch.tensor([1.0, 2.0, 3.0], device=DEV)
    result = c
""")
case("setitem_column_scalar_int", """
    c = torch.zeros(2, 3, device=DEV)
    c[:, 1] = 7
    result = c
""")
case("setitem_broadcast", """
    c = torch.zeros(2, 3, device=DEV)
    c[...] = torch.tensor([1.0, 2.0, 3.0], device=DEV)
    result = c
""")
case("setitem_mask", """
    c = torch.arange(6., device=DEV)
    c[torch.tensor([True, False, True, False, False, True], device=DEV)] = -1.0
    result = c
""")
case("setitem_index_tensors", """
    c = torch.zeros(2, 3, device=DEV)
    c[torch.tensor([0, 1], device=DEV), torch.tensor([2, 0], device=DEV)] = torch.tensor([8.0, 9.0], device=DEV)
    result = c
""")
case("setitem_through_view", """
    base = torch.zeros(3, 4, device=DEV)
    v = base[1:, ::2]
    v[:, 1] = 5.0
    result = base
""")
case("setitem_dtype_cast", """
    c = torch.zeros(3, dtype=torch.int64, device=DEV)
    c[1] = 2.9
    c[2] = torch.tensor(-3.7, device=DEV)
    result = c
""")
case("setitem_shape_error", """
    c = torch.zeros(2, 3, device=DEV)
    c[0] = torch.ones(2, device=DEV)
""")
case("setitem_index_error", """
    c = torch.zeros(2, 3, device=DEV)
    c[2, 0] = 1.0
""")
case("setitem_leaf_requires_grad_error", """
    c = torch.zeros(2, device=DEV, requires_grad=True)
    c[0] = 1.0
""")
case("setitem_records_copy_slices", """
    x = torch.ones(3, device=DEV, requires_grad=True)
    y = x * 2
    y[0] = 0.0
    y.sum().backward()
    result = (y.grad_fn.name(), x.grad)
""")

# ---------------------------------------------------------------------------------------------
# Strides, offsets, storage
# ---------------------------------------------------------------------------------------------
case("stride_forms", f"""
    x = {X234}
    result = (x.stride(), x.stride(0), x.stride(-1), x.shape)
""")
case("size_dim_numel", f"""
    x = {X234}
    result = (x.size(), x.size(1), x.size(-1), x.dim(), x.numel(), len(x), x.ndim)
""")
case("stride_dim_error", f"x = {X34}\nresult = x.stride(2)")
case("storage_offset_chain", f"""
    x = {X234}
    result = [x[1].storage_offset(), x[1, 2].storage_offset(), x[:, 1:, 3].storage_offset(),
              x[1].t()[2:].storage_offset()]
""")
case("is_contiguous_cases", f"""
    x = {X34}
    result = [x.is_contiguous(), x.t().is_contiguous(), x[:, :1].is_contiguous(),
              x[:1, :].is_contiguous(), x[1:2].t().is_contiguous(),
              x[:, 1].is_contiguous(), x.view(3, 1, 4).expand(3, 2, 4).is_contiguous(),
              torch.zeros(0, 3, device=DEV).t().is_contiguous()]
""")
case("untyped_storage_nbytes", f"""
    x = {X34}
    h = torch.zeros(5, dtype=torch.float16, device=DEV)
    l = torch.zeros(2, 3, dtype=torch.int64, device=DEV)
    result = [x.untyped_storage().nbytes(), x[1:, 2].untyped_storage().nbytes(),
              x.t().contiguous().untyped_storage().nbytes(), h.untyped_storage().nbytes(),
              l[0].untyped_storage().nbytes(), x[torch.tensor([0], device=DEV)].untyped_storage().nbytes(),
              torch.tensor([True, False], device=DEV).untyped_storage().nbytes()]
""")
case("data_ptr_offsets", f"""
    x = {X34}
    h = torch.zeros(5, dtype=torch.float16, device=DEV)
    result = [x[1].data_ptr() - x.data_ptr(), x[2, 3].data_ptr() - x.data_ptr(),
              x.t().data_ptr() == x.data_ptr(), x.clone().data_ptr() == x.data_ptr(),
              h[3:].data_ptr() - h.data_ptr()]
""")
case("element_size", """
    result = [torch.zeros(1, dtype=d, device=DEV).element_size()
              for d in (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.bool)]
""")

# ---------------------------------------------------------------------------------------------
# matmul and friends
# ---------------------------------------------------------------------------------------------
A23 = "torch.arange(6., device=DEV).view(2, 3)"
B34 = "(torch.arange(12., device=DEV).view(3, 4) - 5)"
case("matmul_1d_1d", "result = torch.matmul(torch.arange(3., device=DEV), torch.arange(3., device=DEV) + 1)")
case("matmul_2d_1d", f"result = torch.matmul({A23}, torch.tensor([1.0, -1.0, 2.0], device=DEV))")
case("matmul_1d_2d", f"result = torch.matmul(torch.tensor([1.0, -2.0, 0.5], device=DEV), {B34})")
case("matmul_2d_2d", f"result = torch.matmul({A23}, {B34})")
case("matmul_operator", f"result = {A23} @ {B34}")
case("matmul_3d_2d_folds", f"""
    a = torch.arange(24., device=DEV).view(2, 3, 4) / 10
    result = torch.matmul(a, {B34}.t())
""")
case("matmul_2d_3d", f"""
    b = torch.arange(24., device=DEV).view(2, 3, 4) / 10
    result = torch.matmul({A23}, b)
""")
case("matmul_1d_3d", """
    b = torch.arange(24., device=DEV).view(2, 3, 4)
    result = torch.matmul(torch.tensor([1.0, 0.0, -1.0], device=DEV), b)
""")
case("matmul_3d_1d", """
    a = torch.arange(24., device=DEV).view(2, 3, 4)
    result = torch.matmul(a, torch.tensor([1.0, 0.0, -1.0, 0.5], device=DEV))
""")
case("matmul_batch_broadcast", """
    a = torch.arange(12., device=DEV).view(2, 1, 2, 3)
    b = torch.arange(18., device=DEV).view(3, 3, 2) - 4
    result = torch.matmul(a, b)
""")
case("matmul_forum_slice", """
    a = torch.arange(12., device=DEV).view(4, 1, 3)
    c = torch.arange(18., device=DEV).view(3, 3, 2) / 4
    q = torch.tensor([2, 0, 2, 1])
    result = [torch.matmul(a[i:i + 1, :, :], c[q][i, :, :]) for i in range(2)]
""")
case("matmul_noncontiguous_inputs", """
    a = torch.arange(12., device=DEV).view(4, 3)
    result = torch.matmul(a.t(), a[:, ::2])
""")
case("matmul_bfloat16", """
    a = torch.tensor([[0.1, 0.2, 0.3]], dtype=torch.bfloat16, device=DEV)
    b = torch.tensor([[1.0], [2.0], [3.0]], dtype=torch.bfloat16, device=DEV)
    result = a @ b
""")
case("matmul_float64", """
    a = torch.tensor([[0.1, 0.2]], dtype=torch.float64, device=DEV)
    result = a @ a.t()
""")
case("matmul_empty_k", """
    result = torch.matmul(torch.zeros(2, 0, device=DEV), torch.zeros(0, 3, device=DEV))
""")
case("matmul_shape_error", f"result = torch.matmul({A23}, {A23})")
case("matmul_operator_shape_error", f"result = {A23} @ torch.ones(2, device=DEV)")
case("matmul_1d_size_error", "result = torch.ones(3, device=DEV) @ torch.ones(4, device=DEV)")
case("matmul_0d_error", "result = torch.matmul(torch.tensor(1.0, device=DEV), torch.ones(2, device=DEV))")
case("matmul_batch_broadcast_error", """
    result = torch.matmul(torch.ones(2, 2, 3, device=DEV), torch.ones(3, 3, 4, device=DEV))
""")
case("matmul_dtype_error", """
    result = torch.ones(2, 2, device=DEV) @ torch.ones(2, 2, dtype=torch.float64, device=DEV)
""")
case("mm_basic", f"result = torch.mm({A23}, {B34})")
case("mm_method", f"result = {A23}.mm({B34})")
case("mm_shape_error", f"result = torch.mm({A23}, {A23})")
case("mm_3d_error", "result = torch.mm(torch.ones(2, 2, 2, device=DEV), torch.ones(2, 2, device=DEV))")
case("bmm_basic", """
    a = torch.arange(12., device=DEV).view(2, 2, 3)
    b = torch.arange(12., device=DEV).view(2, 3, 2) - 6
    result = torch.bmm(a, b)
""")
case("bmm_transposed_input", """
    a = torch.arange(12., device=DEV).view(2, 3, 2)
    result = a.transpose(1, 2).bmm(a)
""")
case("bmm_batch_error", "result = torch.bmm(torch.ones(2, 2, 3, device=DEV), torch.ones(3, 3, 2, device=DEV))")
case("bmm_inner_error", "result = torch.bmm(torch.ones(2, 2, 3, device=DEV), torch.ones(2, 2, 2, device=DEV))")
case("bmm_2d_error", "result = torch.bmm(torch.ones(2, 3, device=DEV), torch.ones(3, 2, device=DEV))")
case("einsum_mm", f"result = torch.einsum('ij,jk->ik', {A23}, {B34})")
case("einsum_batch", """
    a = torch.arange(12., device=DEV).view(2, 2, 3)
    b = torch.arange(12., device=DEV).view(2, 3, 2)
    result = torch.einsum('bij,bjk->bik', a, b)
""")
case("einsum_multihead", """
    a = torch.arange(24., device=DEV).view(1, 3, 2, 4) / 8
    w = torch.arange(16., device=DEV).view(2, 4, 2) - 8
    result = torch.einsum('bsnd,nde->bsne', a, w)
""")
case("einsum_diag_trace_outer", """
    x = torch.arange(9., device=DEV).view(3, 3)
    v = torch.arange(3., device=DEV)
    result = [torch.einsum('ii->i', x), torch.einsum('ii', x), torch.einsum('i,j->ij', v, v + 1),
              torch.einsum('ij->j', x), torch.einsum('ij', x)]
""")
case("einsum_list_operands", f"result = torch.einsum('ij,jk', [{A23}, {B34}])")
case("einsum_error", f"result = torch.einsum('ij,jk->ik', {A23}, {A23})")
case("einsum_operand_count_error", f"result = torch.einsum('ij,jk->ik', {A23})")

# ---------------------------------------------------------------------------------------------
# cat, stack, reductions
# ---------------------------------------------------------------------------------------------
case("cat_dim0", f"result = torch.cat([{A23}, {A23} + 10])")
case("cat_dim1", f"result = torch.cat([{A23}, torch.ones(2, 1, device=DEV)], dim=1)")
case("cat_neg_dim_tuple", f"result = torch.cat(({A23}, {A23}), -1)")
case("cat_forum_list", """
    parts = [torch.arange(2., device=DEV).view(1, 1, 2) + i for i in range(3)]
    result = torch.cat(parts, dim=0)
""")
case("cat_promotes", "result = torch.cat([torch.arange(2, device=DEV), torch.ones(2, device=DEV)])")
case("cat_noncontiguous", f"x = {X34}\nresult = torch.cat([x.t(), x[:, ::2].t()])")
case("cat_one_tensor_is_copy", f"""
    x = {A23}
    y = torch.cat([x])
    y[0, 0] = 9.0
    result = (x[0, 0].item(), y.is_contiguous())
""")
case("cat_shape_error", f"result = torch.cat([{A23}, torch.ones(3, 3, device=DEV)], dim=1)")
case("cat_rank_error", f"result = torch.cat([{A23}, torch.ones(3, device=DEV)])")
case("cat_dim_error", f"result = torch.cat([{A23}, {A23}], dim=2)")
case("cat_empty_list_error", "result = torch.cat([])")
case("stack_dim0", f"result = torch.stack([{A23}, -{A23}])")
case("stack_dim1", "result = torch.stack([torch.arange(3., device=DEV), torch.ones(3, device=DEV)], dim=1)")
case("stack_dim_last", f"result = torch.stack([{A23}, {A23} * 2], dim=-1)")
case("stack_shape_error", "result = torch.stack([torch.ones(2, device=DEV), torch.ones(3, device=DEV)])")
case("stack_empty_error", "result = torch.stack([])")
case("sum_all", f"result = torch.sum({X34})")
case("sum_dim", f"result = {X34}.sum(0)")
case("sum_dim_keepdim", f"result = {X34}.sum(dim=1, keepdim=True)")
case("sum_dims_tuple", f"result = {X234}.sum((0, 2))")
case("sum_neg_dim", f"result = {X234}.sum(-1)")
case("sum_long", "result = torch.arange(5, device=DEV).sum()")
case("sum_bool", "result = torch.tensor([True, True, False], device=DEV).sum()")
case("sum_dtype_kw", "result = torch.arange(4, device=DEV).sum(dtype=torch.float32)")
case("sum_half", "result = torch.tensor([1000.0, 0.5, 0.25], dtype=torch.float16, device=DEV).sum()")
case("sum_empty", "result = torch.zeros(0, 3, device=DEV).sum(0)")
case("sum_dim_error", f"result = {X34}.sum(2)")
case("mean_all", f"result = torch.mean({X34})")
case("mean_dim", f"result = {X34}.mean(1)")
case("mean_keepdim", f"result = {X234}.mean(dim=(1, 2), keepdim=True)")
case("mean_bfloat16", "result = torch.tensor([1.0, 2.0, 4.0], dtype=torch.bfloat16, device=DEV).mean()")
case("mean_long_error", "result = torch.arange(4, device=DEV).mean()")

# ---------------------------------------------------------------------------------------------
# Elementwise arithmetic and functions
# ---------------------------------------------------------------------------------------------
case("add_tensors", f"result = {A23} + torch.ones(2, 3, device=DEV)")
case("add_broadcast_col_row", """
    result = torch.arange(3., device=DEV).view(3, 1) + torch.arange(4., device=DEV) * 10
""")
case("add_scalar_both_sides", f"result = ({A23} + 1, 1 + {A23}, {A23} + True)")
case("sub_tensors_and_scalars", f"result = ({A23} - 1.5, 10 - {A23}, {A23} - {A23}.t().t())")
case("mul_broadcast", "result = torch.arange(6., device=DEV).view(2, 3) * torch.tensor([1.0, -1.0, 0.5], device=DEV)")
case("mul_scalar", f"result = ({A23} * 3, 0.5 * {A23})")
case("div_tensors", "result = torch.tensor([1.0, 2.0, -3.0], device=DEV) / torch.tensor([4.0, 0.0, 0.0], device=DEV)")
case("div_scalars", f"result = ({A23} / 4, 1 / ({A23} + 1), 0.0 / torch.zeros(1, device=DEV))")
case("div_int_tensors", "result = torch.tensor([7, -7], device=DEV) / 2")
case("add_0d_and_nd", "result = torch.tensor(2.0, device=DEV) + torch.ones(2, 2, device=DEV)")
case("add_bfloat16", """
    a = torch.tensor([1.0, 256.0], dtype=torch.bfloat16, device=DEV)
    result = (a + 1, a * 0.1, a / 3)
""")
case("add_broadcast_error", f"result = {A23} + torch.ones(4, device=DEV)")
case("mul_broadcast_error", "result = torch.ones(2, 3, device=DEV) * torch.ones(3, 2, device=DEV)")
case("add_string_error", f"result = {A23} + 'a'")
case("neg", f"result = (torch.neg({A23}), -{A23}, {A23}.neg())")
case("neg_bool_error", "result = -torch.tensor([True], device=DEV)")
case("cos_sin", "x = torch.arange(4., device=DEV) / 2\nresult = (torch.cos(x), x.sin())")
case("exp", "x = torch.tensor([-1.0, 0.0, 1.0, 100.0], device=DEV)\nresult = (torch.exp(x), x.exp())")
case("cos_long_promotes", "result = torch.cos(torch.arange(3, device=DEV))")
case("cos_bfloat16", "result = torch.tensor([0.5, 1.0], dtype=torch.bfloat16, device=DEV).cos()")
case("relu", "x = torch.tensor([-1.0, 0.0, 2.0], device=DEV)\nresult = (torch.relu(x), x.relu())")
case("relu_long", "result = torch.relu(torch.tensor([-2, 3], device=DEV))")
case("softmax_last", "result = torch.softmax(torch.arange(6., device=DEV).view(2, 3), dim=-1)")
case("softmax_dim0_method", "result = torch.arange(6., device=DEV).view(2, 3).softmax(0)")
case("softmax_large_values", "result = torch.softmax(torch.tensor([1000.0, 1001.0], device=DEV), 0)")
case("softmax_dtype_kw", "result = torch.softmax(torch.arange(3, device=DEV), 0, dtype=torch.float32)")
case("topk_basic", """
    v, i = torch.topk(torch.tensor([0.1, 0.7, 0.3, 0.9], device=DEV), 2)
    result = (v, i)
""")
case("topk_named_fields", """
    r = torch.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], device=DEV).topk(1, dim=1)
    result = (r.values, r.indices)
""")
case("topk_smallest", """
    r = torch.topk(torch.tensor([0.1, 0.7, 0.3, 0.9], device=DEV), 3, largest=False)
    result = (r.values, r.indices)
""")
case("topk_dim0", """
    r = torch.topk(torch.arange(6., device=DEV).view(3, 2), 2, dim=0)
    result = (r.values, r.indices)
""")
case("topk_k_error", "result = torch.topk(torch.ones(3, device=DEV), 4)")
case("allclose_cases", """
    a = torch.tensor([1.0, 2.0], device=DEV)
    result = [torch.allclose(a, a + 1e-7), torch.allclose(a, a + 1e-3),
              torch.allclose(a, a + 1e-3, rtol=1e-2), torch.allclose(a, a + 0.5, atol=0.6),
              a.allclose(a * 1.0), torch.allclose(a, torch.tensor([1.0, float('nan')], device=DEV)),
              torch.allclose(a.view(2, 1), torch.ones(2, 2, device=DEV) * a.view(2, 1))]
""")
case("allclose_dtype_error", """
    result = torch.allclose(torch.ones(2, device=DEV), torch.ones(2, dtype=torch.float64, device=DEV))
""")
case("allclose_shape_error", """
    result = torch.allclose(torch.ones(2, device=DEV), torch.ones(3, device=DEV))
""")

# ---------------------------------------------------------------------------------------------
# Autograd
# ---------------------------------------------------------------------------------------------
case("requires_grad_flags", """
    x = torch.ones(2, device=DEV)
    r = x.requires_grad_()
    y = torch.ones(2, device=DEV).requires_grad_(False)
    result = (r is x, x.requires_grad, x.is_leaf, y.requires_grad, y.is_leaf, x.grad is None)
""")
case("requires_grad_int_error", "result = torch.arange(3, device=DEV).requires_grad_()")
case("is_leaf_and_grad_fn", """
    x = torch.ones(2, device=DEV, requires_grad=True)
    y = x * 2
    z = torch.ones(2, device=DEV) * 2
    result = (y.is_leaf, y.requires_grad, y.grad_fn.name(), z.is_leaf, z.grad_fn is None)
""")
case("grad_fn_names_views", """
    x = torch.arange(12., device=DEV).view(3, 4).requires_grad_()
    outs = [x.view(4, 3), x.reshape(2, 6), x.t().reshape(12), x.permute(1, 0), x.transpose(0, 1),
            x.t(), x.mT, x.unsqueeze(0), x.unsqueeze(0).squeeze(0), x[None].squeeze(),
            x.flatten(), x.t().contiguous(), x.clone(), x.narrow(1, 0, 2), x.select(0, 1),
            x[1], x[1:], x[:, 1:3], x[..., 0], x[None], x[torch.tensor([0, 2], device=DEV)],
            x[torch.tensor([True, False, True], device=DEV)], x.split(2, dim=1)[1],
            x.chunk(2)[0], x.expand(2, 3, 4), x.to(torch.float64)]
    result = [o.grad_fn.name() for o in outs]
""")
case("grad_fn_names_math", """
    x = torch.arange(6., device=DEV).view(2, 3).requires_grad_()
    w = torch.arange(12., device=DEV).view(3, 4).requires_grad_()
    b3 = torch.arange(24., device=DEV).view(2, 3, 4).requires_grad_()
    outs = [x @ w, torch.mm(x, w), torch.matmul(x, w), torch.matmul(b3, w.t()),
            torch.matmul(x[0], w), torch.matmul(x[0], w[:, 0]), torch.bmm(b3, b3.transpose(1, 2)),
            torch.matmul(b3, b3.transpose(1, 2)), torch.einsum('ij,jk->ik', x, w),
            torch.cat([x, x]), torch.stack([x, x]), x.sum(), x.sum(0), x.mean(), x.mean(1),
            x + 1, x + x, x - 1, 1 - x, x * 2, x * x, x / 2, 2 / x, x / x, -x, x.cos(), x.sin(),
            x.exp(), x.relu(), x.softmax(-1), x.topk(2)[0]]
    result = [o.grad_fn.name() for o in outs]
""")
case("next_functions_names", """
    a = torch.arange(6., device=DEV).view(2, 3).requires_grad_()
    w = torch.arange(12., device=DEV).view(3, 4)
    y = (a @ w).relu().sum()
    def names(fn):
        return [None if f is None else f.name() for f, _ in fn.next_functions]
    result = (y.grad_fn.name(), names(y.grad_fn), names(y.grad_fn.next_functions[0][0]),
              names(y.grad_fn.next_functions[0][0].next_functions[0][0]),
              [i for _, i in y.grad_fn.next_functions])
""")
case("next_functions_both_leaves", """
    a = torch.ones(2, 3, device=DEV, requires_grad=True)
    w = torch.ones(3, 4, device=DEV, requires_grad=True)
    fn = (a @ w).grad_fn
    result = [f.name() for f, _ in fn.next_functions]
""")
case("accumulate_grad_variable", """
    a = torch.ones(2, 3, device=DEV, requires_grad=True)
    w = torch.ones(3, 4, device=DEV, requires_grad=True)
    fn = (a @ w).grad_fn
    result = (fn.next_functions[0][0].variable is a, fn.next_functions[1][0].variable is w)
""")
case("saved_tensors_mm", """
    a = torch.arange(6., device=DEV).view(2, 3).requires_grad_()
    w = torch.arange(12., device=DEV).view(3, 4)
    fn = torch.mm(a, w).grad_fn
    # Only what the backward needs is saved: a requires grad, w does not, so mat2 (w) is
    # saved for a's gradient and self (a) is not saved at all.
    result = (fn.name(), fn._saved_mat2.shape, fn._saved_mat2, fn._saved_self is None)
""")
case("saved_tensors_bmm", """
    a = torch.arange(12., device=DEV).view(2, 2, 3).requires_grad_()
    c = torch.arange(18., device=DEV).view(2, 3, 3)
    fn = torch.bmm(a, c).grad_fn
    both = torch.bmm(a, c.requires_grad_()).grad_fn
    result = (fn.name(), fn._saved_mat2.shape, fn._saved_self is None,
              both._saved_mat2.shape, both._saved_self.shape)
""")
case("saved_tensors_forum_matmul", """
    a = torch.arange(12., device=DEV).view(4, 1, 3).requires_grad_()
    c = torch.arange(27., device=DEV).view(3, 3, 3)
    q = torch.tensor([2, 0, 2, 1])
    out = torch.matmul(a, c[q])
    fn = out.grad_fn
    inner = fn.next_functions[0][0] if fn.name() != "BmmBackward0" else fn
    # The forum post's point: c[q] (the gathered copy) is what the product saves.
    result = (fn.name(), inner.name(), inner._saved_mat2.shape, inner._saved_self is None)
""")
case("saved_tensors_forum_slice_loop", """
    a = torch.arange(12., device=DEV).view(4, 1, 3).requires_grad_()
    c = torch.arange(27., device=DEV).view(3, 3, 3)
    out = torch.matmul(a[1:2, :, :], c[1, :, :])
    fn = out.grad_fn
    names = [fn.name()] + [f.name() for f, _ in fn.next_functions if f is not None]
    mm = fn if fn.name() == "MmBackward0" else fn.next_functions[0][0]
    result = (names, mm.name(), mm._saved_mat2.shape, mm._saved_mat2)
""")
case("backward_scalar", """
    x = torch.tensor([1.0, -2.0, 3.0], device=DEV, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    result = (y, x.grad)
""")
case("backward_with_gradient", """
    x = torch.tensor([1.0, -2.0, 3.0], device=DEV, requires_grad=True)
    y = x * 2
    y.backward(torch.tensor([1.0, 0.5, -1.0], device=DEV))
    result = x.grad
""")
case("backward_gradient_kw", """
    x = torch.tensor([1.0, 2.0], device=DEV, requires_grad=True)
    (x * x).backward(gradient=torch.ones(2, device=DEV))
    result = x.grad
""")
case("backward_matmul_grads", """
    a = torch.arange(6., device=DEV).view(2, 3).requires_grad_()
    w = (torch.arange(12., device=DEV).view(3, 4) - 5).requires_grad_()
    (a @ w).sum().backward()
    result = (a.grad, w.grad)
""")
case("backward_forum_gather", """
    a = (torch.arange(12., device=DEV).view(4, 1, 3) / 4).requires_grad_()
    c = (torch.arange(27., device=DEV).view(3, 3, 3) - 13).requires_grad_()
    q = torch.tensor([2, 0, 2, 1])
    out = torch.matmul(a, c[q])
    out.backward(torch.ones(4, 1, 3, device=DEV))
    result = (out, a.grad, c.grad)
""")
case("backward_forum_loop", """
    a = (torch.arange(12., device=DEV).view(4, 1, 3) / 4).requires_grad_()
    c = (torch.arange(27., device=DEV).view(3, 3, 3) - 13).requires_grad_()
    q = torch.tensor([2, 0, 2, 1])
    out = torch.cat([torch.matmul(a[i:i + 1, :, :], c[q[i]]) for i in range(4)], dim=0)
    out.sum().backward()
    result = (out.grad_fn.name(), a.grad, c.grad)
""")
case("backward_broadcast_sums", """
    a = torch.arange(3., device=DEV).view(3, 1).requires_grad_()
    b = torch.arange(4., device=DEV).requires_grad_()
    (a * b + b).sum().backward()
    result = (a.grad, b.grad)
""")
case("backward_chain_functions", """
    x = torch.tensor([[0.5, -1.0, 2.0]], device=DEV, requires_grad=True)
    y = (x.cos() * x.sin() + x.exp() / 4 - x.relu()).softmax(-1)
    y.backward(torch.tensor([[1.0, 2.0, 3.0]], device=DEV))
    result = x.grad
""")
case("backward_mean_views_topk", """
    x = torch.arange(8., device=DEV).view(2, 4).requires_grad_()
    v = x.t()[1:].reshape(-1).topk(3).values
    (v.mean() + x[:, 0].sum() + x.unsqueeze(0).expand(2, 2, 4).sum()).backward()
    result = x.grad
""")
case("backward_stack_einsum", """
    x = torch.arange(6., device=DEV).view(2, 3).requires_grad_()
    w = torch.arange(6., device=DEV).view(3, 2).requires_grad_()
    torch.stack([torch.einsum('ij,jk->ik', x, w), x @ w]).sum().backward()
    result = (x.grad, w.grad)
""")
case("grad_accumulates", """
    x = torch.tensor([1.0, 2.0], device=DEV, requires_grad=True)
    (x * 3).sum().backward()
    (x * x).sum().backward()
    result = x.grad
""")
case("retain_graph_twice", """
    x = torch.tensor([1.0, 2.0], device=DEV, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    result = x.grad
""")
case("backward_twice_error", """
    x = torch.tensor([1.0, 2.0], device=DEV, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()
""")
case("backward_twice_mm_error", """
    a = torch.ones(2, 2, device=DEV, requires_grad=True)
    y = (a @ a).sum()
    y.backward()
    y.backward()
""")
case("saved_tensor_after_backward_error", """
    a = torch.ones(2, 2, device=DEV, requires_grad=True)
    y = a @ torch.ones(2, 2, device=DEV)
    y.sum().backward()
    result = y.grad_fn._saved_mat2
""")
case("backward_nonscalar_error", """
    x = torch.ones(2, device=DEV, requires_grad=True)
    (x * 2).backward()
""")
case("backward_no_grad_fn_error", "torch.ones(2, device=DEV).sum().backward()")
case("backward_gradient_shape_error", """
    x = torch.ones(2, device=DEV, requires_grad=True)
    (x * 2).backward(torch.ones(3, device=DEV))
""")
case("nonleaf_grad_is_none", """
    x = torch.ones(2, device=DEV, requires_grad=True)
    y = x * 2
    y.sum().backward()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = (y.grad is None, x.grad)
""")
case("autograd_grad_basic", """
    x = torch.tensor([1.0, 2.0, 3.0], device=DEV, requires_grad=True)
    (g,) = torch.autograd.grad((x * x).sum(), x)
    result = (g, x.grad is None, g.requires_grad)
""")
case("autograd_grad_outputs", """
    a = torch.arange(6., device=DEV).view(2, 3).requires_grad_()
    w = torch.arange(6., device=DEV).view(3, 2).requires_grad_()
    y = a @ w
    ga, gw = torch.autograd.grad(y, [a, w], grad_outputs=torch.ones(2, 2, device=DEV))
    result = (ga, gw)
""")
case("autograd_grad_retain", """
    x = torch.tensor([2.0], device=DEV, requires_grad=True)
    y = x * x * x
    g1 = torch.autograd.grad(y, x, retain_graph=True)[0]
    g2 = torch.autograd.grad(y, x)[0]
    result = (g1, g2)
""")
case("autograd_grad_twice_error", """
    x = torch.tensor([2.0], device=DEV, requires_grad=True)
    y = (x * x).sum()
    torch.autograd.grad(y, x)
    torch.autograd.grad(y, x)
""")
case("autograd_grad_nonscalar_error", """
    x = torch.ones(2, device=DEV, requires_grad=True)
    torch.autograd.grad(x * 2, x)
""")
case("autograd_grad_not_requiring_error", """
    x = torch.ones(2, device=DEV, requires_grad=True)
    z = torch.ones(2, device=DEV)
    torch.autograd.grad((x * 2).sum(), z)
""")
case("autograd_grad_unused_error", """
    x = torch.ones(2, device=DEV, requires_grad=True)
    z = torch.ones(2, device=DEV, requires_grad=True)
    torch.autograd.grad((x * 2).sum(), [x, z])
""")
case("no_grad_context", """
    x = torch.ones(2, device=DEV, requires_grad=True)
    with torch.no_grad():
        y = x * 2
        v = x.view(2)
    z = x * 2
    result = (y.requires_grad, y.grad_fn is None, v.requires_grad, z.requires_grad)
""")
case("no_grad_decorator", """
    x = torch.ones(2, device=DEV, requires_grad=True)
    @torch.no_grad()
    def double(t):
        return t * 2
    result = (double(x).requires_grad, (x * 2).requires_grad)
""")
case("enable_grad_inside_no_grad", """
    x = torch.ones(2, device=DEV, requires_grad=True)
    with torch.no_grad():
        with torch.enable_grad():
            y = x * 2
        z = x * 2
    result = (y.requires_grad, y.grad_fn.name(), z.requires_grad)
""")
case("set_grad_enabled_context", """
    x = torch.ones(2, device=DEV, requires_grad=True)
    with torch.set_grad_enabled(False):
        y = x * 2
    with torch.set_grad_enabled(True):
        z = x * 2
    result = (y.requires_grad, z.requires_grad)
""")
case("set_grad_enabled_call", """
    x = torch.ones(2, device=DEV, requires_grad=True)
    torch.set_grad_enabled(False)
    try:
        y = x * 2
    finally:
        torch.set_grad_enabled(True)
    z = x * 2
    result = (y.requires_grad, z.requires_grad)
""")
case("inference_mode", """
    x = torch.ones(2, device=DEV, requires_grad=True)
    with torch.inference_mode():
        y = x @ torch.ones(2, device=DEV)
    z = x * 2
    result = (y.requires_grad, y.grad_fn is None, y, z.requires_grad)
""")
case("no_grad_inplace_on_leaf", """
    x = torch.ones(3, device=DEV, requires_grad=True)
    with torch.no_grad():
        x[1] = 5.0
    (x * x).sum().backward()
    result = (x, x.grad, x.is_leaf)
""")

# ---------------------------------------------------------------------------------------------
# More bad calls: wrong argument types, out-of-range dims, bad devices (PyTorch's texts)
# ---------------------------------------------------------------------------------------------
case("type_error_zeros_str_size", "result = torch.zeros(2, 'a', device=DEV)")
case("type_error_view_float", f"x = {A23}\nresult = x.view(2.5)")
case("type_error_reshape_float", f"x = {A23}\nresult = x.reshape(2, 3.0)")
case("type_error_matmul_list", f"x = {A23}\nresult = torch.matmul(x, [1, 2])")
case("type_error_cat_tensor", f"x = {A23}\nresult = torch.cat(x)")
case("type_error_tensor_str", "result = torch.tensor('abc', device=DEV)")
case("type_error_ones_dtype_str", "result = torch.ones(2, dtype='float', device=DEV)")
case("type_error_requires_grad_str", f"x = {A23}\nresult = x.requires_grad_('yes')")
case("type_error_full_none", "result = torch.full((2,), None, device=DEV)")
case("type_error_from_numpy_list", "result = torch.from_numpy([1, 2])")
case("index_error_float_index", f"x = {A23}\nresult = x[1.5]")
case("bad_device_string", "result = torch.arange(3, device='gpu')")
case("randint_empty_range_error", "result = torch.randint(5, 2, (3,), device=DEV)")
case("split_zero_error", f"x = {A23}\nresult = x.split(0)")
case("dim_error_unsqueeze_neg", f"x = {A23}\nresult = x.unsqueeze(-4)")
case("dim_error_squeeze", f"x = {A23}\nresult = x.squeeze(5)")
case("dim_error_narrow", f"x = {A23}\nresult = x.narrow(0, -5, 1)")
case("dim_error_chunk", f"x = {A23}\nresult = x.chunk(2, dim=3)")
case("dim_error_stack", f"x = {A23}\nresult = torch.stack([x, x], dim=4)")
case("dim_error_topk", f"x = {A23}\nresult = x.topk(2, dim=2)")
case("dim_error_softmax", f"x = {A23}\nresult = x.softmax(2)")
case("dim_error_mean", f"x = {A23}\nresult = x.mean(5)")
case("einsum_too_many_operands_error", f"x = {A23}\nresult = torch.einsum('ij', x, x)")
case("autograd_grad_no_graph_error", f"x = {A23}\nresult = torch.autograd.grad(x.sum(), x)")
view_case("getitem_0d_index_tensor_selects", "torch.arange(24., device=DEV).view(3, 2, 4)",
          "x[torch.tensor([2, 0, 1])[0]]")
view_case("getitem_0d_index_tensor_second_dim", "torch.arange(24., device=DEV).view(3, 2, 4)",
          "x[:, torch.tensor(1)]")

# torch.nn.functional.scaled_dot_product_attention: tests/python/cases_attention.py
import cases_attention  # noqa: E402

CASES.extend(cases_attention.CASES)
