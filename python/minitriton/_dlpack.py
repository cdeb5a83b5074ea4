"""The DLPack Python protocol over ctypes: capsules in and out.

In: `obj.__dlpack__()` gives a PyCapsule named "dltensor" (DLPack 0.x's
DLManagedTensor) or, when asked with max_version=(1, 0) and the producer
supports it, "dltensor_versioned". The consumer takes the pointer, hands it
to mt_tensor_from_dlpack(_versioned) (the tensor then owns it and calls its
deleter on its last release) and renames the capsule "used_dltensor"
(_versioned) so that the capsule's destructor leaves it alone. When the
import is refused, the capsule keeps its name and its destructor calls the
producer's deleter, as the protocol asks.

Out: mt_tensor_to_dlpack(_versioned) makes a managed tensor holding a
reference on the minitriton tensor; it goes into a capsule whose
destructor calls the managed tensor's deleter unless a consumer renamed
the capsule (it then calls the deleter itself, once).
"""
import ctypes

_api = ctypes.pythonapi
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

# Names must outlive every capsule (PyCapsule keeps the pointer): module
# constants are never freed.
DLTENSOR = b"dltensor"
USED_DLTENSOR = b"used_dltensor"
DLTENSOR_VERSIONED = b"dltensor_versioned"
USED_DLTENSOR_VERSIONED = b"used_dltensor_versioned"

# The deleter is the pointer after manager_ctx in both structs:
#   DLManagedTensor          { DLTensor dl_tensor; void *manager_ctx; void (*deleter)(self); }
#   DLManagedTensorVersioned { DLPackVersion version; void *manager_ctx; void (*deleter)(self); ... }
_DELETER = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)  # the GIL stays held: a deleter may need it


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.c_void_p),
        ("strides", ctypes.c_void_p),
        ("byte_offset", ctypes.c_uint64),
    ]


class _Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _ManagedVersioned(ctypes.Structure):
    _fields_ = [
        ("version", _Version),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", _DLTensor),
    ]


def _call_deleter(struct, ptr):
    m = struct.from_address(ptr)
    if m.deleter:
        _DELETER(m.deleter)(ptr)


# The capsule destructors get the dying capsule as a raw pointer (a
# py_object would take a new reference on an object being freed).
_raw = ctypes.pythonapi
_IsValid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_IsValid", _raw))
_GetPointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_GetPointer", _raw))


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(cap):
    # Unconsumed: the capsule still has its original name.
    if _IsValid(cap, DLTENSOR):
        _call_deleter(_Managed, _GetPointer(cap, DLTENSOR))
    elif _IsValid(cap, DLTENSOR_VERSIONED):
        _call_deleter(_ManagedVersioned, _GetPointer(cap, DLTENSOR_VERSIONED))


_DESTRUCTOR = ctypes.cast(_capsule_destructor, ctypes.c_void_p).value


def make_capsule(managed_ptr, versioned):
    """A capsule owning managed_ptr (from mt_tensor_to_dlpack(_versioned))."""
    return _api.PyCapsule_New(managed_ptr, DLTENSOR_VERSIONED if versioned else DLTENSOR, _DESTRUCTOR)


def take_capsule(cap):
    """(pointer, versioned) of an unconsumed DLPack capsule; raises
    BufferError for anything else (a consumed capsule, another object)."""
    if _api.PyCapsule_IsValid(cap, DLTENSOR_VERSIONED):
        return _api.PyCapsule_GetPointer(cap, DLTENSOR_VERSIONED), True
    if _api.PyCapsule_IsValid(cap, DLTENSOR):
        return _api.PyCapsule_GetPointer(cap, DLTENSOR), False
    raise BufferError("__dlpack__() did not return an unused DLPack capsule (%r)" % (cap,))


def mark_used(cap, versioned):
    """Renames a capsule whose managed tensor minitriton now owns."""
    _api.PyCapsule_SetName(cap, USED_DLTENSOR_VERSIONED if versioned else USED_DLTENSOR)


def consume(obj):
    """Calls obj.__dlpack__ as the protocol asks: DLPack 1.0 capsules when
    the producer has them, else 0.x; stream None for host memory, 1 (the
    legacy default stream, which minitriton's own blocking stream is
    ordered after) for CUDA memory."""
    stream = None
    if hasattr(obj, "__dlpack_device__"):
        dev_type, _ = obj.__dlpack_device__()
        if int(dev_type) in (2, 13):  # kDLCUDA, kDLCUDAManaged
            stream = 1
    try:
        return obj.__dlpack__(stream=stream, max_version=(1, 0))
    except TypeError:  # a producer older than DLPack 1.0's protocol
        return obj.__dlpack__(stream=stream)
