# tests/cuda/: tests of the CUDA plugin; they skip without a CUDA device.
