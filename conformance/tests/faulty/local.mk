# conformance/tests/faulty/: the shim corpus, faulty plugins built over
# the reference CPU plugin (shim.c and one fault of faults-*.c each; the
# list is corpus.tsv), the tool that confirms each fault directly, and
# four correct plugins written differently from the reference
# (conformance/tests/good/).  Included from conformance/local.mk; nothing
# here is installed.

# The CPU plugin's sources, compiled once, with the entry point renamed so
# that shim.c can wrap it.
check_LTLIBRARIES += %D%/libcpuref.la
%C%_libcpuref_la_SOURCES = $(plugins_cpu_cpu_la_SOURCES)
%C%_libcpuref_la_CFLAGS = $(AM_CFLAGS) $(BP_VISIBILITY_CFLAGS) $(BP_CPU_CFLAGS) \
	-Dbp_plugin_init=cpuref_plugin_init

# A fault's plugin: shim.c and the file of its fault, -DFAULT_<NAME>.
SHIM_CFLAGS = $(TEST_PLUGIN_CFLAGS)
SHIM_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
SHIM_LIBADD = %D%/libcpuref.la -lm $(BP_DL_LIBS) $(BP_PTHREAD_LIBS)

check_LTLIBRARIES += \
	%D%/mul_tail7.la \
	%D%/sum_unroll_tail.la \
	%D%/exp_par_tail.la \
	%D%/sigmoid_rank5.la \
	%D%/neg_offset.la \
	%D%/relu_dense.la \
	%D%/sqrt_bcast_inner.la \
	%D%/where_inner_step.la \
	%D%/add_bcast_mid.la \
	%D%/sub_rank_swap.la \
	%D%/pow_scalar_exp.la \
	%D%/argmax_offset.la \
	%D%/mean_negdims.la \
	%D%/sum_multidim.la \
	%D%/amin_keepdim.la \
	%D%/sum_dtype_ignored.la \
	%D%/add_first_dtype.la \
	%D%/mul_int8_as_u8.la \
	%D%/minimum_u8_i8.la \
	%D%/maximum_nan.la \
	%D%/relu_negzero.la \
	%D%/exp_clamp.la \
	%D%/sin_naive_reduce.la \
	%D%/cos_shift.la \
	%D%/erf_as726.la \
	%D%/silu_underflow.la \
	%D%/lt_nan_ordered.la \
	%D%/eq_signed_zero.la \
	%D%/index_select_clamp.la \
	%D%/gather_dense_strides.la \
	%D%/cumsum_block_carry.la \
	%D%/add_two_pass.la \
	%D%/sort_reversed_ties.la \
	%D%/topk_nan_smallest.la \
	%D%/sdpa_scale_inv_e.la \
	%D%/conv2d_group_offset.la \
	%D%/max_pool2d_nan_gt.la \
	%D%/avg_pool2d_pad_ignored.la \
	%D%/cat_empty_break.la \
	%D%/clamp_fmax_nan.la \
	%D%/rms_norm_eps_outside.la \
	%D%/softmax_nomax.la \
	%D%/sum_f16_accum.la \
	%D%/abs_int_min.la \
	%D%/cast_cvtt.la \
	%D%/div_ftz.la \
	%D%/pow_exp_log.la \
	%D%/matmul_k_tail.la \
	%D%/matmul_batch_b.la \
	%D%/matmul_trans_b.la \
	%D%/matmul_k1.la \
	%D%/tanh_past_end.la \
	%D%/log_before_start.la \
	%D%/rsqrt_rounding.la \
	%D%/ftz_at_load.la \
	%D%/segv_handler.la \
	%D%/sigint_ignored.la \
	%D%/thread_at_load.la \
	%D%/mmap_left.la \
	%D%/teardown_null_call.la \
	%D%/teardown_release.la \
	%D%/softmax_dim_clamp.la \
	%D%/gelu_abort.la \
	%D%/amax_exit.la \
	%D%/argmax_no_message.la \
	%D%/layer_norm_numel.la \
	%D%/sum_static_partials.la \
	%D%/exp_table_init.la \
	%D%/softmax_pingpong.la \
	%D%/add_leak_on_error.la \
	%D%/matmul_leak_ws.la \
	%D%/setenv_omp.la \
	%D%/umask_at_load.la \
	%D%/fd_left_open.la \
	%D%/pins_caller.la \
	%D%/fpenv_worker_ftz.la \
	%D%/sigprof_sem_eintr.la \
	%D%/fork_no_atfork.la \
	%D%/stack_scratch.la \
	%D%/one_cpu_divide.la \
	%D%/key_leak.la \
	%D%/tls_destructor.la \
	%D%/sum_pow2_partials.la \
	%D%/hooks_libc.la \
	%D%/sigmoid_arena.la \
	%D%/matmul_beta_one.la \
	%D%/matmul_pack_cache.la \
	%D%/softmax_stale_error.la \
	%D%/layer_norm_printf.la \
	%D%/relu_sign_bit.la \
	%D%/cast_bf16_bias.la \
	%D%/cast_narrow_early_inf.la \
	%D%/cast_i64_f32_double.la \
	%D%/eq_int64_double.la \
	%D%/sort_bits_key.la \
	%D%/isnan_canonical.la \
	%D%/clamp_int_double.la \
	%D%/masked_fill_int_double.la \
	%D%/axpby_dense.la \
	%D%/softmax_ws_unchecked.la \
	%D%/mul_oom_backend.la \
	%D%/sum_stage_leak.la \
	%D%/layer_norm_bias_needs_weight.la \
	%D%/topk_unsorted_pairs.la
%C%_mul_tail7_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-shapes.c
%C%_mul_tail7_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_MUL_TAIL7
%C%_mul_tail7_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_mul_tail7_la_LIBADD = $(SHIM_LIBADD)
%C%_sum_unroll_tail_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-shapes.c
%C%_sum_unroll_tail_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SUM_UNROLL_TAIL
%C%_sum_unroll_tail_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_sum_unroll_tail_la_LIBADD = $(SHIM_LIBADD)
%C%_exp_par_tail_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-shapes.c
%C%_exp_par_tail_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_EXP_PAR_TAIL
%C%_exp_par_tail_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_exp_par_tail_la_LIBADD = $(SHIM_LIBADD)
%C%_sigmoid_rank5_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-shapes.c
%C%_sigmoid_rank5_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SIGMOID_RANK5
%C%_sigmoid_rank5_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_sigmoid_rank5_la_LIBADD = $(SHIM_LIBADD)
%C%_neg_offset_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-shapes.c
%C%_neg_offset_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_NEG_OFFSET
%C%_neg_offset_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_neg_offset_la_LIBADD = $(SHIM_LIBADD)
%C%_relu_dense_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-shapes.c
%C%_relu_dense_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_RELU_DENSE
%C%_relu_dense_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_relu_dense_la_LIBADD = $(SHIM_LIBADD)
%C%_sqrt_bcast_inner_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-shapes.c
%C%_sqrt_bcast_inner_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SQRT_BCAST_INNER
%C%_sqrt_bcast_inner_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_sqrt_bcast_inner_la_LIBADD = $(SHIM_LIBADD)
%C%_where_inner_step_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-shapes.c
%C%_where_inner_step_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_WHERE_INNER_STEP
%C%_where_inner_step_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_where_inner_step_la_LIBADD = $(SHIM_LIBADD)
%C%_add_bcast_mid_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-shapes.c
%C%_add_bcast_mid_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_ADD_BCAST_MID
%C%_add_bcast_mid_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_add_bcast_mid_la_LIBADD = $(SHIM_LIBADD)
%C%_sub_rank_swap_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-shapes.c
%C%_sub_rank_swap_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SUB_RANK_SWAP
%C%_sub_rank_swap_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_sub_rank_swap_la_LIBADD = $(SHIM_LIBADD)
%C%_pow_scalar_exp_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-shapes.c
%C%_pow_scalar_exp_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_POW_SCALAR_EXP
%C%_pow_scalar_exp_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_pow_scalar_exp_la_LIBADD = $(SHIM_LIBADD)
%C%_argmax_offset_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-shapes.c
%C%_argmax_offset_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_ARGMAX_OFFSET
%C%_argmax_offset_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_argmax_offset_la_LIBADD = $(SHIM_LIBADD)
%C%_mean_negdims_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-shapes.c
%C%_mean_negdims_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_MEAN_NEGDIMS
%C%_mean_negdims_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_mean_negdims_la_LIBADD = $(SHIM_LIBADD)
%C%_sum_multidim_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-shapes.c
%C%_sum_multidim_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SUM_MULTIDIM
%C%_sum_multidim_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_sum_multidim_la_LIBADD = $(SHIM_LIBADD)
%C%_amin_keepdim_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-shapes.c
%C%_amin_keepdim_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_AMIN_KEEPDIM
%C%_amin_keepdim_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_amin_keepdim_la_LIBADD = $(SHIM_LIBADD)
%C%_sum_dtype_ignored_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-shapes.c
%C%_sum_dtype_ignored_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SUM_DTYPE_IGNORED
%C%_sum_dtype_ignored_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_sum_dtype_ignored_la_LIBADD = $(SHIM_LIBADD)
%C%_add_first_dtype_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-values.c
%C%_add_first_dtype_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_ADD_FIRST_DTYPE
%C%_add_first_dtype_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_add_first_dtype_la_LIBADD = $(SHIM_LIBADD)
%C%_mul_int8_as_u8_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-values.c
%C%_mul_int8_as_u8_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_MUL_INT8_AS_U8
%C%_mul_int8_as_u8_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_mul_int8_as_u8_la_LIBADD = $(SHIM_LIBADD)
%C%_minimum_u8_i8_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-values.c
%C%_minimum_u8_i8_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_MINIMUM_U8_I8
%C%_minimum_u8_i8_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_minimum_u8_i8_la_LIBADD = $(SHIM_LIBADD)
%C%_maximum_nan_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-values.c
%C%_maximum_nan_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_MAXIMUM_NAN
%C%_maximum_nan_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_maximum_nan_la_LIBADD = $(SHIM_LIBADD)
%C%_relu_negzero_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-values.c
%C%_relu_negzero_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_RELU_NEGZERO
%C%_relu_negzero_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_relu_negzero_la_LIBADD = $(SHIM_LIBADD)
%C%_sin_naive_reduce_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-v2.c
%C%_sin_naive_reduce_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SIN_NAIVE_REDUCE
%C%_sin_naive_reduce_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_sin_naive_reduce_la_LIBADD = $(SHIM_LIBADD)
%C%_cos_shift_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-v2.c
%C%_cos_shift_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_COS_SHIFT
%C%_cos_shift_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_cos_shift_la_LIBADD = $(SHIM_LIBADD)
%C%_erf_as726_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-v2.c
%C%_erf_as726_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_ERF_AS726
%C%_erf_as726_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_erf_as726_la_LIBADD = $(SHIM_LIBADD)
%C%_silu_underflow_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-v2.c
%C%_silu_underflow_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SILU_UNDERFLOW
%C%_silu_underflow_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_silu_underflow_la_LIBADD = $(SHIM_LIBADD)
%C%_lt_nan_ordered_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-v2.c
%C%_lt_nan_ordered_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_LT_NAN_ORDERED
%C%_lt_nan_ordered_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_lt_nan_ordered_la_LIBADD = $(SHIM_LIBADD)
%C%_eq_signed_zero_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-v2.c
%C%_eq_signed_zero_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_EQ_SIGNED_ZERO
%C%_eq_signed_zero_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_eq_signed_zero_la_LIBADD = $(SHIM_LIBADD)
%C%_index_select_clamp_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-v2.c
%C%_index_select_clamp_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_INDEX_SELECT_CLAMP
%C%_index_select_clamp_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_index_select_clamp_la_LIBADD = $(SHIM_LIBADD)
%C%_gather_dense_strides_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-v2.c
%C%_gather_dense_strides_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_GATHER_DENSE_STRIDES
%C%_gather_dense_strides_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_gather_dense_strides_la_LIBADD = $(SHIM_LIBADD)
%C%_cumsum_block_carry_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-v2.c
%C%_cumsum_block_carry_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_CUMSUM_BLOCK_CARRY
%C%_cumsum_block_carry_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_cumsum_block_carry_la_LIBADD = $(SHIM_LIBADD)
%C%_add_two_pass_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-v2.c
%C%_add_two_pass_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_ADD_TWO_PASS
%C%_add_two_pass_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_add_two_pass_la_LIBADD = $(SHIM_LIBADD)
%C%_sdpa_scale_inv_e_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-v2.c
%C%_sdpa_scale_inv_e_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SDPA_SCALE_INV_E
%C%_sdpa_scale_inv_e_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_sdpa_scale_inv_e_la_LIBADD = $(SHIM_LIBADD)
%C%_conv2d_group_offset_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-layers.c
%C%_conv2d_group_offset_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_CONV2D_GROUP_OFFSET
%C%_conv2d_group_offset_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_conv2d_group_offset_la_LIBADD = $(SHIM_LIBADD)
%C%_max_pool2d_nan_gt_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-layers.c
%C%_max_pool2d_nan_gt_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_MAX_POOL2D_NAN_GT
%C%_max_pool2d_nan_gt_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_max_pool2d_nan_gt_la_LIBADD = $(SHIM_LIBADD)
%C%_avg_pool2d_pad_ignored_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-layers.c
%C%_avg_pool2d_pad_ignored_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_AVG_POOL2D_PAD_IGNORED
%C%_avg_pool2d_pad_ignored_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_avg_pool2d_pad_ignored_la_LIBADD = $(SHIM_LIBADD)
%C%_cat_empty_break_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-layers.c
%C%_cat_empty_break_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_CAT_EMPTY_BREAK
%C%_cat_empty_break_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_cat_empty_break_la_LIBADD = $(SHIM_LIBADD)
%C%_clamp_fmax_nan_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-layers.c
%C%_clamp_fmax_nan_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_CLAMP_FMAX_NAN
%C%_clamp_fmax_nan_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_clamp_fmax_nan_la_LIBADD = $(SHIM_LIBADD)
%C%_rms_norm_eps_outside_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-layers.c
%C%_rms_norm_eps_outside_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_RMS_NORM_EPS_OUTSIDE
%C%_rms_norm_eps_outside_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_rms_norm_eps_outside_la_LIBADD = $(SHIM_LIBADD)
%C%_sort_reversed_ties_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-v2.c
%C%_sort_reversed_ties_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SORT_REVERSED_TIES
%C%_sort_reversed_ties_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_sort_reversed_ties_la_LIBADD = $(SHIM_LIBADD)
%C%_topk_nan_smallest_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-v2.c
%C%_topk_nan_smallest_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_TOPK_NAN_SMALLEST
%C%_topk_nan_smallest_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_topk_nan_smallest_la_LIBADD = $(SHIM_LIBADD)
%C%_exp_clamp_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-values.c
%C%_exp_clamp_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_EXP_CLAMP
%C%_exp_clamp_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_exp_clamp_la_LIBADD = $(SHIM_LIBADD)
%C%_softmax_nomax_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-values.c
%C%_softmax_nomax_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SOFTMAX_NOMAX
%C%_softmax_nomax_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_softmax_nomax_la_LIBADD = $(SHIM_LIBADD)
%C%_sum_f16_accum_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-values.c
%C%_sum_f16_accum_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SUM_F16_ACCUM
%C%_sum_f16_accum_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_sum_f16_accum_la_LIBADD = $(SHIM_LIBADD)
%C%_abs_int_min_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-values.c
%C%_abs_int_min_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_ABS_INT_MIN
%C%_abs_int_min_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_abs_int_min_la_LIBADD = $(SHIM_LIBADD)
%C%_cast_cvtt_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-values.c
%C%_cast_cvtt_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_CAST_CVTT
%C%_cast_cvtt_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_cast_cvtt_la_LIBADD = $(SHIM_LIBADD)
%C%_div_ftz_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-values.c
%C%_div_ftz_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_DIV_FTZ
%C%_div_ftz_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_div_ftz_la_LIBADD = $(SHIM_LIBADD)
%C%_pow_exp_log_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-values.c
%C%_pow_exp_log_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_POW_EXP_LOG
%C%_pow_exp_log_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_pow_exp_log_la_LIBADD = $(SHIM_LIBADD)
%C%_matmul_k_tail_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-values.c
%C%_matmul_k_tail_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_MATMUL_K_TAIL
%C%_matmul_k_tail_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_matmul_k_tail_la_LIBADD = $(SHIM_LIBADD)
%C%_matmul_batch_b_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-values.c
%C%_matmul_batch_b_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_MATMUL_BATCH_B
%C%_matmul_batch_b_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_matmul_batch_b_la_LIBADD = $(SHIM_LIBADD)
%C%_matmul_trans_b_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-values.c
%C%_matmul_trans_b_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_MATMUL_TRANS_B
%C%_matmul_trans_b_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_matmul_trans_b_la_LIBADD = $(SHIM_LIBADD)
%C%_matmul_k1_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-values.c
%C%_matmul_k1_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_MATMUL_K1
%C%_matmul_k1_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_matmul_k1_la_LIBADD = $(SHIM_LIBADD)
%C%_tanh_past_end_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-process.c
%C%_tanh_past_end_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_TANH_PAST_END
%C%_tanh_past_end_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_tanh_past_end_la_LIBADD = $(SHIM_LIBADD)
%C%_log_before_start_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-process.c
%C%_log_before_start_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_LOG_BEFORE_START
%C%_log_before_start_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_log_before_start_la_LIBADD = $(SHIM_LIBADD)
%C%_rsqrt_rounding_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-process.c
%C%_rsqrt_rounding_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_RSQRT_ROUNDING
%C%_rsqrt_rounding_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_rsqrt_rounding_la_LIBADD = $(SHIM_LIBADD)
%C%_ftz_at_load_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-process.c
%C%_ftz_at_load_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_FTZ_AT_LOAD
%C%_ftz_at_load_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_ftz_at_load_la_LIBADD = $(SHIM_LIBADD)
%C%_segv_handler_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-process.c
%C%_segv_handler_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SEGV_HANDLER
%C%_segv_handler_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_segv_handler_la_LIBADD = $(SHIM_LIBADD)
%C%_sigint_ignored_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-process.c
%C%_sigint_ignored_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SIGINT_IGNORED
%C%_sigint_ignored_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_sigint_ignored_la_LIBADD = $(SHIM_LIBADD)
%C%_thread_at_load_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-process.c
%C%_thread_at_load_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_THREAD_AT_LOAD
%C%_thread_at_load_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_thread_at_load_la_LIBADD = $(SHIM_LIBADD)
%C%_mmap_left_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-process.c
%C%_mmap_left_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_MMAP_LEFT
%C%_mmap_left_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_mmap_left_la_LIBADD = $(SHIM_LIBADD)
%C%_teardown_null_call_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-process.c
%C%_teardown_null_call_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_TEARDOWN_NULL_CALL
%C%_teardown_null_call_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_teardown_null_call_la_LIBADD = $(SHIM_LIBADD)
%C%_teardown_release_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-process.c
%C%_teardown_release_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_TEARDOWN_RELEASE
%C%_teardown_release_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_teardown_release_la_LIBADD = $(SHIM_LIBADD)
%C%_softmax_dim_clamp_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-errors.c
%C%_softmax_dim_clamp_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SOFTMAX_DIM_CLAMP
%C%_softmax_dim_clamp_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_softmax_dim_clamp_la_LIBADD = $(SHIM_LIBADD)
%C%_gelu_abort_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-errors.c
%C%_gelu_abort_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_GELU_ABORT
%C%_gelu_abort_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_gelu_abort_la_LIBADD = $(SHIM_LIBADD)
%C%_amax_exit_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-errors.c
%C%_amax_exit_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_AMAX_EXIT
%C%_amax_exit_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_amax_exit_la_LIBADD = $(SHIM_LIBADD)
%C%_argmax_no_message_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-errors.c
%C%_argmax_no_message_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_ARGMAX_NO_MESSAGE
%C%_argmax_no_message_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_argmax_no_message_la_LIBADD = $(SHIM_LIBADD)
%C%_layer_norm_numel_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-errors.c
%C%_layer_norm_numel_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_LAYER_NORM_NUMEL
%C%_layer_norm_numel_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_layer_norm_numel_la_LIBADD = $(SHIM_LIBADD)
%C%_sum_static_partials_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-errors.c
%C%_sum_static_partials_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SUM_STATIC_PARTIALS
%C%_sum_static_partials_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_sum_static_partials_la_LIBADD = $(SHIM_LIBADD)
%C%_exp_table_init_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-errors.c
%C%_exp_table_init_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_EXP_TABLE_INIT
%C%_exp_table_init_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_exp_table_init_la_LIBADD = $(SHIM_LIBADD)
%C%_softmax_pingpong_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-errors.c
%C%_softmax_pingpong_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SOFTMAX_PINGPONG
%C%_softmax_pingpong_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_softmax_pingpong_la_LIBADD = $(SHIM_LIBADD)
%C%_add_leak_on_error_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-errors.c
%C%_add_leak_on_error_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_ADD_LEAK_ON_ERROR
%C%_add_leak_on_error_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_add_leak_on_error_la_LIBADD = $(SHIM_LIBADD)
%C%_matmul_leak_ws_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-errors.c
%C%_matmul_leak_ws_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_MATMUL_LEAK_WS
%C%_matmul_leak_ws_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_matmul_leak_ws_la_LIBADD = $(SHIM_LIBADD)
%C%_setenv_omp_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-host.c
%C%_setenv_omp_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SETENV_OMP
%C%_setenv_omp_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_setenv_omp_la_LIBADD = $(SHIM_LIBADD)
%C%_umask_at_load_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-host.c
%C%_umask_at_load_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_UMASK_AT_LOAD
%C%_umask_at_load_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_umask_at_load_la_LIBADD = $(SHIM_LIBADD)
%C%_fd_left_open_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-host.c
%C%_fd_left_open_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_FD_LEFT_OPEN
%C%_fd_left_open_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_fd_left_open_la_LIBADD = $(SHIM_LIBADD)
%C%_pins_caller_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-host.c
%C%_pins_caller_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_PINS_CALLER
%C%_pins_caller_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_pins_caller_la_LIBADD = $(SHIM_LIBADD)
%C%_fpenv_worker_ftz_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-host.c
%C%_fpenv_worker_ftz_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_FPENV_WORKER_FTZ
%C%_fpenv_worker_ftz_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_fpenv_worker_ftz_la_LIBADD = $(SHIM_LIBADD)
%C%_sigprof_sem_eintr_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-host.c
%C%_sigprof_sem_eintr_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SIGPROF_SEM_EINTR
%C%_sigprof_sem_eintr_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_sigprof_sem_eintr_la_LIBADD = $(SHIM_LIBADD)
%C%_fork_no_atfork_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-host.c
%C%_fork_no_atfork_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_FORK_NO_ATFORK
%C%_fork_no_atfork_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_fork_no_atfork_la_LIBADD = $(SHIM_LIBADD)
%C%_stack_scratch_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-host.c
%C%_stack_scratch_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_STACK_SCRATCH
%C%_stack_scratch_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_stack_scratch_la_LIBADD = $(SHIM_LIBADD)
%C%_one_cpu_divide_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-host.c
%C%_one_cpu_divide_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_ONE_CPU_DIVIDE
%C%_one_cpu_divide_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_one_cpu_divide_la_LIBADD = $(SHIM_LIBADD)
%C%_key_leak_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-host.c
%C%_key_leak_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_KEY_LEAK
%C%_key_leak_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_key_leak_la_LIBADD = $(SHIM_LIBADD)
%C%_tls_destructor_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-host.c
%C%_tls_destructor_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_TLS_DESTRUCTOR
%C%_tls_destructor_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_tls_destructor_la_LIBADD = $(SHIM_LIBADD)
%C%_sum_pow2_partials_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-host.c
%C%_sum_pow2_partials_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SUM_POW2_PARTIALS
%C%_sum_pow2_partials_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_sum_pow2_partials_la_LIBADD = $(SHIM_LIBADD)
%C%_hooks_libc_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-host.c
%C%_hooks_libc_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_HOOKS_LIBC
%C%_hooks_libc_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_hooks_libc_la_LIBADD = $(SHIM_LIBADD)
%C%_sigmoid_arena_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-life.c
%C%_sigmoid_arena_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SIGMOID_ARENA
%C%_sigmoid_arena_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_sigmoid_arena_la_LIBADD = $(SHIM_LIBADD)
%C%_matmul_beta_one_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-life.c
%C%_matmul_beta_one_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_MATMUL_BETA_ONE
%C%_matmul_beta_one_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_matmul_beta_one_la_LIBADD = $(SHIM_LIBADD)
%C%_matmul_pack_cache_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-life.c
%C%_matmul_pack_cache_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_MATMUL_PACK_CACHE
%C%_matmul_pack_cache_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_matmul_pack_cache_la_LIBADD = $(SHIM_LIBADD)
%C%_softmax_stale_error_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-life.c
%C%_softmax_stale_error_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SOFTMAX_STALE_ERROR
%C%_softmax_stale_error_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_softmax_stale_error_la_LIBADD = $(SHIM_LIBADD)
%C%_layer_norm_printf_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-life.c
%C%_layer_norm_printf_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_LAYER_NORM_PRINTF
%C%_layer_norm_printf_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_layer_norm_printf_la_LIBADD = $(SHIM_LIBADD)
%C%_relu_sign_bit_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-edges.c
%C%_relu_sign_bit_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_RELU_SIGN_BIT
%C%_relu_sign_bit_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_relu_sign_bit_la_LIBADD = $(SHIM_LIBADD)
%C%_cast_bf16_bias_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-edges.c
%C%_cast_bf16_bias_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_CAST_BF16_BIAS
%C%_cast_bf16_bias_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_cast_bf16_bias_la_LIBADD = $(SHIM_LIBADD)
%C%_cast_narrow_early_inf_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-edges.c
%C%_cast_narrow_early_inf_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_CAST_NARROW_EARLY_INF
%C%_cast_narrow_early_inf_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_cast_narrow_early_inf_la_LIBADD = $(SHIM_LIBADD)
%C%_cast_i64_f32_double_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-edges.c
%C%_cast_i64_f32_double_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_CAST_I64_F32_DOUBLE
%C%_cast_i64_f32_double_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_cast_i64_f32_double_la_LIBADD = $(SHIM_LIBADD)
%C%_eq_int64_double_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-edges.c
%C%_eq_int64_double_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_EQ_INT64_DOUBLE
%C%_eq_int64_double_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_eq_int64_double_la_LIBADD = $(SHIM_LIBADD)
%C%_sort_bits_key_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-edges.c
%C%_sort_bits_key_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SORT_BITS_KEY
%C%_sort_bits_key_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_sort_bits_key_la_LIBADD = $(SHIM_LIBADD)
%C%_isnan_canonical_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-edges.c
%C%_isnan_canonical_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_ISNAN_CANONICAL
%C%_isnan_canonical_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_isnan_canonical_la_LIBADD = $(SHIM_LIBADD)
%C%_clamp_int_double_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-edges.c
%C%_clamp_int_double_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_CLAMP_INT_DOUBLE
%C%_clamp_int_double_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_clamp_int_double_la_LIBADD = $(SHIM_LIBADD)
%C%_masked_fill_int_double_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-edges.c
%C%_masked_fill_int_double_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_MASKED_FILL_INT_DOUBLE
%C%_masked_fill_int_double_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_masked_fill_int_double_la_LIBADD = $(SHIM_LIBADD)
%C%_axpby_dense_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-vendor.c
%C%_axpby_dense_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_AXPBY_DENSE
%C%_axpby_dense_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_axpby_dense_la_LIBADD = $(SHIM_LIBADD)
%C%_softmax_ws_unchecked_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-oom.c
%C%_softmax_ws_unchecked_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SOFTMAX_WS_UNCHECKED
%C%_softmax_ws_unchecked_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_softmax_ws_unchecked_la_LIBADD = $(SHIM_LIBADD)
%C%_mul_oom_backend_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-oom.c
%C%_mul_oom_backend_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_MUL_OOM_BACKEND
%C%_mul_oom_backend_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_mul_oom_backend_la_LIBADD = $(SHIM_LIBADD)
%C%_sum_stage_leak_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-oom.c
%C%_sum_stage_leak_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_SUM_STAGE_LEAK
%C%_sum_stage_leak_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_sum_stage_leak_la_LIBADD = $(SHIM_LIBADD)
%C%_layer_norm_bias_needs_weight_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-args.c
%C%_layer_norm_bias_needs_weight_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_LAYER_NORM_BIAS_NEEDS_WEIGHT
%C%_layer_norm_bias_needs_weight_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_layer_norm_bias_needs_weight_la_LIBADD = $(SHIM_LIBADD)
%C%_topk_unsorted_pairs_la_SOURCES = %D%/shim.c %D%/shim.h %D%/faults-args.c
%C%_topk_unsorted_pairs_la_CFLAGS = $(SHIM_CFLAGS) -DFAULT_TOPK_UNSORTED_PAIRS
%C%_topk_unsorted_pairs_la_LDFLAGS = $(SHIM_LDFLAGS)
%C%_topk_unsorted_pairs_la_LIBADD = $(SHIM_LIBADD)
EXTRA_DIST += %D%/corpus.tsv

# Confirms each fault on its trigger, against the float64 reference of the
# CPU plugin's tests, and that the CPU plugin does not show it.
check_PROGRAMS += %D%/confirm
%C%_confirm_SOURCES = \
	%D%/confirm.c \
	%D%/confirm.h \
	%D%/triggers-num.c \
	%D%/triggers-proc.c \
	%D%/triggers-host.c \
	%D%/triggers-life.c \
	%D%/triggers-edges.c \
	conformance/ref/ref.c \
	conformance/ref/ref2.c \
	conformance/ref/ref3.c \
	conformance/ref/ref.h \
	conformance/ref/num.c \
	conformance/ref/num.h
%C%_confirm_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/conformance/ref -I$(top_srcdir)/host
# The host's objects, for the allocator's test controls (expect_oom).
%C%_confirm_LDADD = host/libbphost.la $(BP_PTHREAD_LIBS) -ldl -lm
TESTS += conformance/tests/test-faulty-confirm.sh
dist_check_SCRIPTS += conformance/tests/test-faulty-confirm.sh

# Four correct plugins written differently from the CPU plugin: each
# conforms (bp-certify --profile full).
check_LTLIBRARIES += \
	conformance/tests/good/naive.la \
	conformance/tests/good/strided.la \
	conformance/tests/good/vendoronly.la \
	conformance/tests/good/f32only.la
conformance_tests_good_naive_la_SOURCES = conformance/tests/good/naive.c
conformance_tests_good_naive_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
conformance_tests_good_naive_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
conformance_tests_good_naive_la_LIBADD = -lm
conformance_tests_good_strided_la_SOURCES = conformance/tests/good/strided.c
conformance_tests_good_strided_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
conformance_tests_good_strided_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
conformance_tests_good_vendoronly_la_SOURCES = conformance/tests/good/vendoronly.c
conformance_tests_good_vendoronly_la_LIBADD = -lm
conformance_tests_good_vendoronly_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
conformance_tests_good_vendoronly_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
# vendoronly.c built as its reference (bp-certify --reference) and with a
# fault only a reference of its values catches (test-certify-vendor.sh).
# With -DVND_FAKEDEV, the same on a device type of the plugin's own.
check_LTLIBRARIES += \
	conformance/tests/good/vendoronly_ref.la \
	conformance/tests/faulty/vnd_scale_dense.la \
	conformance/tests/good/vendoronly_dev.la \
	conformance/tests/faulty/vnd_scale_dense_dev.la \
	conformance/tests/faulty/vnd_act_log1p.la \
	conformance/tests/faulty/vnd_axpy_overlap.la \
	conformance/tests/faulty/vnd_clamp_gaps.la
conformance_tests_faulty_vnd_axpy_overlap_la_SOURCES = conformance/tests/good/vendoronly.c
conformance_tests_faulty_vnd_axpy_overlap_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DVND_FAULT_AXPY_OVERLAP
conformance_tests_faulty_vnd_axpy_overlap_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
conformance_tests_faulty_vnd_axpy_overlap_la_LIBADD = -lm
conformance_tests_faulty_vnd_clamp_gaps_la_SOURCES = conformance/tests/good/vendoronly.c
conformance_tests_faulty_vnd_clamp_gaps_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DVND_FAULT_CLAMP_GAPS
conformance_tests_faulty_vnd_clamp_gaps_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
conformance_tests_faulty_vnd_clamp_gaps_la_LIBADD = -lm
conformance_tests_faulty_vnd_act_log1p_la_SOURCES = conformance/tests/good/vendoronly.c
conformance_tests_faulty_vnd_act_log1p_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DVND_FAULT_ACT_LOG1P
conformance_tests_faulty_vnd_act_log1p_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
conformance_tests_faulty_vnd_act_log1p_la_LIBADD = -lm
conformance_tests_good_vendoronly_dev_la_SOURCES = conformance/tests/good/vendoronly.c
conformance_tests_good_vendoronly_dev_la_LIBADD = -lm
conformance_tests_good_vendoronly_dev_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/plugins
conformance_tests_good_vendoronly_dev_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DVND_FAKEDEV
conformance_tests_good_vendoronly_dev_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
conformance_tests_faulty_vnd_scale_dense_dev_la_SOURCES = conformance/tests/good/vendoronly.c
conformance_tests_faulty_vnd_scale_dense_dev_la_LIBADD = -lm
conformance_tests_faulty_vnd_scale_dense_dev_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests/plugins
conformance_tests_faulty_vnd_scale_dense_dev_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DVND_FAKEDEV \
	-DVND_FAULT_SCALE_DENSE
conformance_tests_faulty_vnd_scale_dense_dev_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) \
	$(TEST_PLUGIN_EXPORTS)
conformance_tests_good_vendoronly_ref_la_SOURCES = conformance/tests/good/vendoronly.c
conformance_tests_good_vendoronly_ref_la_LIBADD = -lm
conformance_tests_good_vendoronly_ref_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DVND_REFERENCE
conformance_tests_good_vendoronly_ref_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
conformance_tests_faulty_vnd_scale_dense_la_SOURCES = conformance/tests/good/vendoronly.c
conformance_tests_faulty_vnd_scale_dense_la_LIBADD = -lm
conformance_tests_faulty_vnd_scale_dense_la_CFLAGS = $(TEST_PLUGIN_CFLAGS) -DVND_FAULT_SCALE_DENSE
conformance_tests_faulty_vnd_scale_dense_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
conformance_tests_good_f32only_la_SOURCES = conformance/tests/good/f32only.c
conformance_tests_good_f32only_la_CFLAGS = $(TEST_PLUGIN_CFLAGS)
conformance_tests_good_f32only_la_LDFLAGS = $(TEST_PLUGIN_LDFLAGS) $(TEST_PLUGIN_EXPORTS)
