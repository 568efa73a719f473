# SPDX-License-Identifier: MIT
# fbwire-sql edits lines and keeps history at the terminal with libedit (BSD licence).
pkg_check_modules(LIBEDIT REQUIRED IMPORTED_TARGET libedit)
target_link_libraries(${name} PRIVATE PkgConfig::LIBEDIT)
