/* The page's HTML, CSS and JavaScript (src/report/assets/), built into srvscope as they
 * are, each followed by a NUL: the static binary carries them too. The Makefile makes this
 * file depend on them. */
#include "report/assets.h"

#define ASSET(sym, file)                                                                           \
	__asm__(".pushsection .rodata\n"                                                           \
		".global " #sym "\n"                                                               \
		".type " #sym ", @object\n"                                                        \
		".balign 16\n" #sym ":\n"                                                          \
		".incbin \"" file "\"\n"                                                           \
		".byte 0\n"                                                                        \
		".size " #sym ", . - " #sym "\n"                                                   \
		".popsection\n")

ASSET(report_asset_html, "src/report/assets/report.html");
ASSET(report_asset_css, "src/report/assets/report.css");
ASSET(report_asset_js, "src/report/assets/report.js");
