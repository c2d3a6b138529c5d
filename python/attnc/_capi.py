"""The attnrt C API (include/attnc/Runtime/attnrt.h) as ctypes sees it: its
dtype codes, its sampling struct, the signatures of its functions."""

import ctypes

import numpy as np

from ._errors import AttncError


# attnrt_dtype values (attnrt.h) and their numpy types. bf16 has no numpy
# dtype: it travels as its raw uint16 bits, as in .npy files.
_DTYPES = {
    0: ("f32", np.dtype(np.float32)),
    1: ("f16", np.dtype(np.float16)),
    2: ("bf16", np.dtype(np.uint16)),
    3: ("i32", np.dtype(np.int32)),
    4: ("i64", np.dtype(np.int64)),
}


class _Sampling(ctypes.Structure):
    """attnrt_sampling."""
    _fields_ = [("temperature", ctypes.c_float), ("top_k", ctypes.c_int64),
                ("top_p", ctypes.c_float)]


def _declare(lib):
    """Gives the library's attnrt functions their ctypes signatures."""
    ptr, c_int, size_t = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
    sigs = {
        "attnrt_open_linked": (ptr, [ctypes.c_char_p, size_t]),
        "attnrt_close": (None, [ptr]),
        "attnrt_last_error": (ctypes.c_char_p, [ptr]),
        "attnrt_target": (ctypes.c_char_p, [ptr]),
        "attnrt_num_weights": (c_int, [ptr]),
        "attnrt_num_inputs": (c_int, [ptr]),
        "attnrt_num_outputs": (c_int, [ptr]),
        "attnrt_num_states": (c_int, [ptr]),
        "attnrt_state_name": (ctypes.c_char_p, [ptr, c_int]),
        "attnrt_state_dtype": (c_int, [ptr, c_int]),
        "attnrt_state_rank": (c_int, [ptr, c_int]),
        "attnrt_state_dim": (ctypes.c_int64, [ptr, c_int, c_int]),
        "attnrt_reset_state": (c_int, [ptr]),
        "attnrt_input_name": (ctypes.c_char_p, [ptr, c_int]),
        "attnrt_input_dtype": (c_int, [ptr, c_int]),
        "attnrt_input_rank": (c_int, [ptr, c_int]),
        "attnrt_input_dim": (ctypes.c_int64, [ptr, c_int, c_int]),
        "attnrt_output_name": (ctypes.c_char_p, [ptr, c_int]),
        "attnrt_output_dtype": (c_int, [ptr, c_int]),
        "attnrt_output_rank": (c_int, [ptr, c_int]),
        "attnrt_output_dim": (ctypes.c_int64, [ptr, c_int, c_int]),
        "attnrt_bind_weights": (c_int, [ptr, ctypes.c_char_p]),
        "attnrt_set_input": (c_int, [ptr, c_int, ptr, size_t]),
        "attnrt_set_input_shaped": (
            c_int, [ptr, c_int, ptr, size_t, c_int,
                    ctypes.POINTER(ctypes.c_int64)]),
        "attnrt_output_shape": (ctypes.POINTER(ctypes.c_int64),
                                [ptr, c_int]),
        "attnrt_run": (c_int, [ptr]),
        "attnrt_get_output": (c_int, [ptr, c_int, ptr, size_t]),
        "attnrt_last_run_ms": (ctypes.c_double, [ptr]),
        "attnrt_context_create": (ptr, [ptr]),
        "attnrt_context_free": (None, [ptr]),
        "attnrt_context_last_error": (ctypes.c_char_p, [ptr]),
        "attnrt_context_set_input_shaped": (
            c_int, [ptr, c_int, ptr, size_t, c_int,
                    ctypes.POINTER(ctypes.c_int64)]),
        "attnrt_context_output_shape": (ctypes.POINTER(ctypes.c_int64),
                                        [ptr, c_int]),
        "attnrt_context_run": (c_int, [ptr]),
        "attnrt_context_get_output": (c_int, [ptr, c_int, ptr, size_t]),
        "attnrt_context_reset_state": (c_int, [ptr]),
        "attnrt_context_last_run_ms": (ctypes.c_double, [ptr]),
        "attnrt_session_create": (ptr, [ptr, ctypes.c_uint64]),
        "attnrt_session_free": (None, [ptr]),
        "attnrt_session_shape": (
            None, [ptr, ctypes.POINTER(ctypes.c_int64),
                   ctypes.POINTER(ctypes.c_int64),
                   ctypes.POINTER(ctypes.c_int64)]),
        "attnrt_session_prefill": (
            c_int, [ptr, ptr, ptr, ctypes.c_int64, ctypes.c_int64]),
        "attnrt_session_decode": (c_int, [ptr, ptr]),
        "attnrt_session_sample": (
            c_int, [ptr, ctypes.POINTER(_Sampling), ptr]),
        "attnrt_session_set_encoder_input": (
            c_int, [ptr, ptr, ptr, ctypes.c_int64, ctypes.c_int64]),
        "attnrt_session_generate": (
            c_int, [ptr, ptr, ptr, ctypes.c_int64, ctypes.c_int64,
                    ctypes.c_int64, ctypes.POINTER(_Sampling),
                    ctypes.c_int64, ptr]),
        "attnrt_session_timing": (
            None, [ptr, ctypes.POINTER(ctypes.c_double),
                   ctypes.POINTER(ctypes.c_double),
                   ctypes.POINTER(ctypes.c_int64)]),
        "attnrt_session_slot_start": (
            c_int, [ptr, ctypes.c_int64, ptr, ctypes.c_int64]),
        "attnrt_session_slots_step": (
            c_int, [ptr, ptr, ctypes.c_int64, ptr]),
        "attnrt_session_slot_free": (c_int, [ptr, ctypes.c_int64]),
        "attnrt_session_set_slot_prefill": (c_int, [ptr, ptr]),
        "attnrt_session_set_slot_pad_budget": (
            c_int, [ptr, ctypes.c_int64]),
        "attnrt_open": (ptr, [ctypes.c_char_p, ptr, ctypes.c_char_p,
                              size_t]),
        "attnrt_linked_entry": (
            c_int, [ctypes.POINTER(ctypes.c_char_p),
                    ctypes.POINTER(ptr)]),
    }
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes


def _raise_failure(message):
    """AttncError with the runtime's message (bytes or None)."""
    raise AttncError(message.decode(errors="replace") if message
                     else "attnrt call failed")
