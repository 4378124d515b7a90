# docs/: shipped with the distribution.
dist_doc_DATA = \
	%D%/schemas.md
