# sdk/: the installed headers, and the pkg-config file for plugins.
backplaneincludedir = $(includedir)/backplane
backplaneinclude_HEADERS = \
	%D%/include/backplane/abi.h \
	%D%/include/backplane/plugin.h \
	%D%/include/backplane/host.h \
	%D%/include/backplane/plugin_aux.h \
	%D%/include/backplane/plugin_aux_kernel.h \
	%D%/include/backplane/plugin_aux_iter.h \
	%D%/include/backplane/plugin_aux_pointwise.h

pkgconfig_DATA += %D%/backplane-sdk.pc
EXTRA_DIST += %D%/backplane-sdk.pc.in
