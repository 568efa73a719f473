/* SPDX-License-Identifier: MIT */
/* keeps the support library non-empty */ typedef int fbw_testsupport_empty;
