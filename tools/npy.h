/*
 * tools/npy.h - reads and writes NumPy .npy files as Backplane tensors.
 *
 * Formats 1.0, 2.0 and 3.0 are read, in C or Fortran order, little-, big-
 * or native-endian, with the dtypes that both NumPy and Backplane have
 * (bool, int8, int16, int32, int64, uint8, float16, float32, float64).
 * Files are written as format 1.0, C order, native byte order, with the
 * data 64-byte aligned.
 *
 * A .npy file is untrusted input: its header's lengths and shape are
 * checked against the file's size, and for overflow, before anything is
 * allocated for it.  Nothing here prints or exits.  Each function returns a
 * status and, on failure, writes one line that names the file and the
 * problem (expected against found) into err, a buffer of errlen bytes.
 */
#ifndef BP_TOOLS_NPY_H
#define BP_TOOLS_NPY_H

#include <stddef.h>

#include <backplane/host.h>

typedef enum npy_status {
  NPY_OK = 0,
  NPY_ERR_IO,          /* cannot open, create, read or write the file */
  NPY_ERR_FORMAT,      /* not a .npy file, or a header or data that is wrong */
  NPY_ERR_TRUNCATED,   /* the file ends before its header says it does */
  NPY_ERR_UNSUPPORTED, /* a format version or dtype this reader lacks */
  NPY_ERR_OVERFLOW,    /* the shape's element or byte count overflows */
  NPY_ERR_NOMEM,       /* out of memory */
  NPY_ERR_HOST         /* libbackplane refused the tensor; its message is in err */
} npy_status;

/* Reads the .npy file at path into a new CPU tensor, *out, which the
 * caller releases with bp_tensor_release().  On failure *out is NULL. */
npy_status npy_read(const char *path, bp_tensor **out, char *err, size_t errlen);

/* Writes t (any device, any strides; it is copied to the host in C order
 * first when it is not there already) to path, replacing the file. */
npy_status npy_write(const char *path, bp_tensor *t, char *err, size_t errlen);

#endif /* BP_TOOLS_NPY_H */
