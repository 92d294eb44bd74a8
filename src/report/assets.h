/* The page's template, style sheet and script (src/report/assets/), NUL-terminated. */
#ifndef SRVSCOPE_REPORT_ASSETS_H
#define SRVSCOPE_REPORT_ASSETS_H

extern const char report_asset_html[], report_asset_css[], report_asset_js[];

#endif
