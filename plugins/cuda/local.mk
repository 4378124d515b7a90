# plugins/cuda/: the CUDA reference plugin, built when configure finds the CUDA Toolkit.
