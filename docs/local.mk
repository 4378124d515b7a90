# docs/: shipped with the distribution.
dist_doc_DATA = \
	%D%/schemas.md \
	%D%/op-set.md \
	%D%/cpu-plugin.md \
	%D%/cuda-plugin.md \
	%D%/certification.md \
	%D%/vendor-guide.md \
	%D%/host-guide.md \
	%D%/abi-policy.md \
	%D%/python.md
