/* SPDX-License-Identifier: MIT */
/* fbwire.h - the public API: the only header tools, the sysbench driver and other programs include.
 *
 * Layers (dependencies point down): client.h (blocking, sockets) -> tx.h, stmt.h, blob.h, batch.h
 * (the objects) -> conn.h (sans-I/O connection state machine) -> msg.h, value.h (values) -> xdr.h,
 * buf.h, err.h (base). The packet layout (pkt.h) and the request queue the objects put packets on
 * (request.h) are internal (docs/library.md: what is public and why). stats.h is the
 * round-trip accounting every connection carries; status.h turns server status vectors into fbw_err.
 * pipe.h (pipeline mode) sits on stmt.h, blob.h and tx.h and waits through the client's callback.
 * svc.h (the services API: start, query, output) sits on conn.h; svcclient.h runs it on client.h. */
#ifndef FBWIRE_H
#define FBWIRE_H

#include "batch.h"
#include "blob.h"
#include "blobset.h"
#include "client.h"
#include "conn.h"
#include "dsn.h"
#include "err.h"
#include "ops.h"
#include "pipe.h"
#include "stats.h"
#include "status.h"
#include "stmt.h"
#include "svc.h"
#include "svcclient.h"
#include "tx.h"
#include "value.h"

/* The one place the version is written: CMakeLists.txt reads it for the project, the soname
 * (libfbwire.so.<major>; before 1.0, libfbwire.so.0.<minor>: docs/library.md "ABI"), pkg-config,
 * the CMake package and the Debian package. */
#define FBWIRE_VERSION "0.3.1"

#endif
