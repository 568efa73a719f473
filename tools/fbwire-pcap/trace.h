/* SPDX-License-Identifier: MIT */
/* trace.h - the text a Firebird trace session writes (the trace plug-in's log, as fbtracemgr or
 * the services API's isc_info_svc_line hand it out), parsed into events: what happened (attach,
 * transaction start and end, prepare, execute start and finish, free, close), when (the record's
 * timestamp), in which attachment and transaction, on which statement, with its SQL text, its
 * parameters as the server printed them, the records it fetched and its elapsed ms.
 *
 * A record is a header line "YYYY-MM-DDTHH:MM:SS.FFFF (PID:0xADDR) [FAILED |UNAUTHORIZED ]NAME",
 * its context lines (a tab: the attachment, the process; two tabs: the transaction) and a body,
 * and ends with a blank line before the next header. Input can come in pieces (a live session):
 * only complete records are taken, the rest waits for more text or for the end.
 *
 * Bounds-checked and pure (no I/O). Text that is not a trace (garbage, an event name Firebird
 * does not write, a record cut short at the end) stops the parse with an error naming the line;
 * the events before it are kept. */
#ifndef PCAPTOOL_TRACE_H
#define PCAPTOOL_TRACE_H

#include <stddef.h>
#include <stdint.h>

enum pcaptool_trace_kind {
    PCAPTOOL_TRACE_OTHER = 0,       /* a known event the workload does not use (procedures,
                                * triggers, services, sweep, errors, session start/end...) */
    PCAPTOOL_TRACE_ATTACH,          /* ATTACH_DATABASE */
    PCAPTOOL_TRACE_DETACH,          /* DETACH_DATABASE */
    PCAPTOOL_TRACE_START,           /* START_TRANSACTION */
    PCAPTOOL_TRACE_COMMIT,          /* COMMIT_TRANSACTION */
    PCAPTOOL_TRACE_COMMIT_RETAINING,
    PCAPTOOL_TRACE_ROLLBACK,        /* ROLLBACK_TRANSACTION */
    PCAPTOOL_TRACE_ROLLBACK_RETAINING,
    PCAPTOOL_TRACE_PREPARE,         /* PREPARE_STATEMENT */
    PCAPTOOL_TRACE_EXEC_START,      /* EXECUTE_STATEMENT_START */
    PCAPTOOL_TRACE_EXEC_FINISH,     /* EXECUTE_STATEMENT_FINISH */
    PCAPTOOL_TRACE_FREE,            /* FREE_STATEMENT */
    PCAPTOOL_TRACE_CLOSE,           /* CLOSE_CURSOR */
    PCAPTOOL_TRACE_KINDS
};

/* One parameter as the trace printed it: "paramN = TYPE, "VALUE"" or "paramN = TYPE, "<NULL>""
 * (older servers: <NULL> without quotes). The value is as the server formats it: text cut to
 * max_arg_length with "...", booleans "<true>" and "<false>", timestamps with a 'T', blobs and
 * arrays their id only. */
typedef struct pcaptool_trace_param {
    char *type; /* "integer", "varchar(93)", ... */
    char *text; /* the value without its quotes (NUL-terminated), NULL when is_null */
    size_t len;
    int is_null;
} pcaptool_trace_param;

typedef struct pcaptool_trace_event {
    int kind;        /* enum pcaptool_trace_kind */
    char name[64];   /* the event's name as written ("EXECUTE_STATEMENT_FINISH") */
    int failed;      /* FAILED or UNAUTHORIZED before the name: the server refused it */
    uint64_t ts_ns;  /* the record's time, ns since the epoch (the server's clock, 0.1 ms) */
    size_t line;     /* its header's line in the input (1-based) */
    int64_t att;     /* ATT_n, -1 none */
    char *db;        /* the attachment's database as the server names it, or NULL */
    char *user;      /* "USER:ROLE" */
    char *remote;    /* "TCPv4:127.0.0.1/45384", "<internal>" ... */
    char *process;   /* the client process line ("/usr/bin/isql-fb:11649"), or NULL */
    int64_t tra;     /* TRA_n, -1 none */
    char *tra_opts;  /* "READ_COMMITTED | REC_VERSION | WAIT | READ_WRITE" */
    int64_t stmt;    /* "Statement N:", 0 when the record has none (DDL on some versions) */
    char *sql;       /* the statement text, or NULL */
    pcaptool_trace_param *params;
    uint16_t nparams;
    int64_t records; /* "N records fetched", -1 none */
    int64_t ms;      /* elapsed ms of the perf line, -1 none */
} pcaptool_trace_event;

typedef struct pcaptool_trace {
    pcaptool_trace_event *ev;
    size_t n, cap;
    size_t lines;  /* lines consumed so far */
    int started;   /* a header has been seen */
    char err[256]; /* why the parse stopped ("" none) */
} pcaptool_trace;

void pcaptool_trace_init(pcaptool_trace *t);
void pcaptool_trace_free(pcaptool_trace *t);
/* Parse the complete records at the start of text[0, len); *used = bytes consumed. final: the
 * input ends with it (the last record must then be complete). FBW_OK; FBW_E_PROTO (t->err says
 * what and where; the events before it stay) or FBW_E_NOMEM. Call again with the text from
 * *used on, with more appended. */
int pcaptool_trace_feed(pcaptool_trace *t, const char *text, size_t len, int final, size_t *used);
/* "ATTACH_DATABASE" -> PCAPTOOL_TRACE_ATTACH, ...; -1 for a name Firebird's trace never writes. */
int pcaptool_trace_kind_of(const char *name);

#endif
