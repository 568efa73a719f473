/* SPDX-License-Identifier: MIT */
/* errclass.c - the one error model of fbwire: the classes of an fbw_err, from its return code and
 * its gds chain (see status.h; the rules for a reader: docs/library.md "Errors").
 *
 * Each code belongs to at most one class (code_class[] below). An error is in every class one of
 * its codes is in (fbw_err_in_class), and its class is the highest-ranked of those
 * (fbw_err_classify). Message text decides nothing, with the one exception written out at
 * random_text[]: a few engine errors come as isc_random and their text, nothing else. */
#include "status.h"

#include "msgs.h"

#include <string.h>

typedef uint32_t class_set; /* bit c set: in class c */

#define BIT(c) ((class_set)1u << (unsigned)(c))

/* Which class a server code stands for.
 * - Record conflicts on FB 3/4 arrive as isc_deadlock + isc_update_conflict (or isc_read_conflict)
 *   + isc_concurrent_transaction whatever the wait mode, a deadlock's victim too (src/jrd/vio.cpp
 *   PREPARE_LOCKERR); isc_lock_conflict / isc_lock_timeout come from the lock manager (no-wait /
 *   timed wait on a lock that is not a record) and from transaction start.
 * - isc_no_cur_rec: FB3's word for a row that a concurrent transaction deleted (and the garbage
 *   collector removed) while our statement waited for it (vio.cpp VIO_refetch_record). The same
 *   code also says that a positioned UPDATE/DELETE has no current row (dsql/StmtNodes.cpp), which
 *   no code tells apart: retrying that fails again, so it is classed by the concurrent case.
 * - isc_bad_db_handle from the server: it no longer knows our attachment (shut down, killed).
 * - isc_cancelled: fbw_client_cancel or the server cancelled the request; FB4's statement
 *   timeouts add the level that expired as a second code (jrd.cpp getCancelState). */
static const struct {
    uint32_t code;
    fbw_errclass cls;
} code_class[] = {
    {FBW_ISC_NETWORK_ERROR, FBW_EC_CONNECTION_LOST},
    {FBW_ISC_NET_READ_ERR, FBW_EC_CONNECTION_LOST},
    {FBW_ISC_NET_WRITE_ERR, FBW_EC_CONNECTION_LOST},
    {FBW_ISC_NET_CONNECT_ERR, FBW_EC_CONNECTION_LOST},
    {FBW_ISC_LOST_DB_CONNECTION, FBW_EC_CONNECTION_LOST},
    {FBW_ISC_CONN_LOST, FBW_EC_CONNECTION_LOST},
    {FBW_ISC_NET_SERVER_SHUTDOWN, FBW_EC_CONNECTION_LOST},
    {FBW_ISC_ATT_SHUTDOWN, FBW_EC_CONNECTION_LOST},
    {FBW_ISC_SHUTDOWN, FBW_EC_CONNECTION_LOST},
    {FBW_ISC_ATT_SHUT_KILLED, FBW_EC_CONNECTION_LOST},
    {FBW_ISC_ATT_SHUT_IDLE, FBW_EC_CONNECTION_LOST},
    {FBW_ISC_ATT_SHUT_DB_DOWN, FBW_EC_CONNECTION_LOST},
    {FBW_ISC_ATT_SHUT_ENGINE, FBW_EC_CONNECTION_LOST},
    {FBW_ISC_BAD_DB_HANDLE, FBW_EC_CONNECTION_LOST},
    {FBW_ISC_LOGIN, FBW_EC_AUTH},
    {FBW_ISC_LOGIN_ERROR, FBW_EC_AUTH},
    {FBW_ISC_LOGIN_CHANGED, FBW_EC_AUTH},
    {FBW_ISC_AUTH_DATA, FBW_EC_AUTH},
    {FBW_ISC_AUTH_DATALENGTH, FBW_EC_AUTH},
    {FBW_ISC_AUTH_HANDSHAKE_LIMIT, FBW_EC_AUTH},
    {FBW_ISC_WIRECRYPT_INCOMPATIBLE, FBW_EC_AUTH},
    {FBW_ISC_MISS_WIRECRYPT, FBW_EC_AUTH},
    {FBW_ISC_WIRECRYPT_KEY, FBW_EC_AUTH},
    {FBW_ISC_WIRECRYPT_PLUGIN, FBW_EC_AUTH},
    {FBW_ISC_MISSING_DATA_STRUCTURES, FBW_EC_AUTH},
    {FBW_ISC_NON_PLUGIN_PROTOCOL, FBW_EC_AUTH},
    {FBW_ISC_MULTI_SEGMENT, FBW_EC_AUTH},
    {FBW_ISC_MULTI_SEGMENT_DUP, FBW_EC_AUTH},
    {FBW_ISC_PSW_ATTACH, FBW_EC_AUTH},
    {FBW_ISC_IO_OPEN_ERR, FBW_EC_NO_DATABASE},
    {FBW_ISC_BAD_DB_FORMAT, FBW_EC_NO_DATABASE},
    {FBW_ISC_UNAVAILABLE, FBW_EC_NO_DATABASE},
    {FBW_ISC_CANCELLED, FBW_EC_CANCELLED},
    {FBW_ISC_CFG_STMT_TIMEOUT, FBW_EC_STATEMENT_TIMEOUT},
    {FBW_ISC_ATT_STMT_TIMEOUT, FBW_EC_STATEMENT_TIMEOUT},
    {FBW_ISC_REQ_STMT_TIMEOUT, FBW_EC_STATEMENT_TIMEOUT},
    {FBW_ISC_UPDATE_CONFLICT, FBW_EC_UPDATE_CONFLICT},
    {FBW_ISC_READ_CONFLICT, FBW_EC_UPDATE_CONFLICT},
    {FBW_ISC_NO_CUR_REC, FBW_EC_UPDATE_CONFLICT},
    {FBW_ISC_LOCK_TIMEOUT, FBW_EC_LOCK_TIMEOUT},
    {FBW_ISC_LOCK_CONFLICT, FBW_EC_LOCK_CONFLICT},
    {FBW_ISC_DEADLOCK, FBW_EC_DEADLOCK},
    {FBW_ISC_NO_DUP, FBW_EC_UNIQUE},
    {FBW_ISC_UNIQUE_KEY_VIOLATION, FBW_EC_UNIQUE},
    {FBW_ISC_FOREIGN_KEY, FBW_EC_FOREIGN_KEY},
    {FBW_ISC_RELNOTDEF, FBW_EC_UNKNOWN_OBJECT},
    {FBW_ISC_FLDNOTDEF, FBW_EC_UNKNOWN_OBJECT},
    {FBW_ISC_FLDNOTDEF2, FBW_EC_UNKNOWN_OBJECT},
    {FBW_ISC_DSQL_RELATION_ERR, FBW_EC_UNKNOWN_OBJECT},
    {FBW_ISC_DSQL_FIELD_ERR, FBW_EC_UNKNOWN_OBJECT},
    {FBW_ISC_DSQL_PROCEDURE_ERR, FBW_EC_UNKNOWN_OBJECT},
    {FBW_ISC_DSQL_FUNCTION_ERR, FBW_EC_UNKNOWN_OBJECT},
    {FBW_ISC_DSQL_TABLE_NOT_FOUND, FBW_EC_UNKNOWN_OBJECT},
    {FBW_ISC_DSQL_VIEW_NOT_FOUND, FBW_EC_UNKNOWN_OBJECT},
    {FBW_ISC_DSQL_DOMAIN_NOT_FOUND, FBW_EC_UNKNOWN_OBJECT},
    {FBW_ISC_PRCNOTDEF, FBW_EC_UNKNOWN_OBJECT},
    {FBW_ISC_FUNNOTDEF, FBW_EC_UNKNOWN_OBJECT},
    {FBW_ISC_GENNOTDEF, FBW_EC_UNKNOWN_OBJECT},
    {FBW_ISC_XCPNOTDEF, FBW_EC_UNKNOWN_OBJECT},
    {FBW_ISC_INDEXNOTDEFINED, FBW_EC_UNKNOWN_OBJECT},
    {FBW_ISC_DYN_VIEW_NOT_FOUND, FBW_EC_UNKNOWN_OBJECT},
    {FBW_ISC_DYN_GEN_NOT_FOUND, FBW_EC_UNKNOWN_OBJECT},
    {FBW_ISC_DYN_PROC_NOT_FOUND, FBW_EC_UNKNOWN_OBJECT},
    {FBW_ISC_DYN_INDEX_NOT_FOUND, FBW_EC_UNKNOWN_OBJECT},
    {FBW_ISC_DYN_TRIG_NOT_FOUND, FBW_EC_UNKNOWN_OBJECT},
    {FBW_ISC_DYN_EXCEPTION_NOT_FOUND, FBW_EC_UNKNOWN_OBJECT},
    {FBW_ISC_DYN_DOMAIN_NOT_FOUND, FBW_EC_UNKNOWN_OBJECT},
    /* Parser errors only: isc_dsql_command_err ("Invalid command") also wraps semantic DDL
     * errors (src/dsql/DdlNodes.epp), so it decides nothing. */
    {FBW_ISC_DSQL_TOKEN_UNK_ERR, FBW_EC_SYNTAX},
    {FBW_ISC_TOKEN_ERR, FBW_EC_SYNTAX},
    {FBW_ISC_COMMAND_END_ERR, FBW_EC_SYNTAX},
    {FBW_ISC_COMMAND_END_ERR2, FBW_EC_SYNTAX},
};

/* The one decision taken on text. src/jrd/err.cpp ERR_error (IBERROR) looks an engine message up
 * by number and sends only its text, as the argument of isc_random: no code of the vector tells
 * these errors apart, so the text (fixed in the engine's message file, not translated) is all
 * there is. It is consulted only when the chain has isc_random and no code of it has a class
 * (random_classes), and it is searched in the rendered message, where both backends put the
 * argument as it is (status.c renders isc_random as "@1"; fbclient's fb_interpret the same). */
static const struct {
    const char *text;
    fbw_errclass cls;
} random_text[] = {
    /* jrd_bugchk 188: vio.cpp prepare_update found the row our UPDATE/DELETE waited for deleted
     * by a transaction that committed meanwhile (read committed; FB3, FB4 without read
     * consistency) - the same situation isc_update_conflict reports for a changed row. */
    {"cannot update erased record", FBW_EC_UPDATE_CONFLICT},
};

/* When codes of several classes meet in one chain, the first of this list wins: a dead link
 * outranks whatever the server said before it, a statement timeout refines the isc_cancelled
 * before it, and isc_update_conflict refines the isc_deadlock before it. */
static const fbw_errclass by_rank[] = {
    FBW_EC_TIMEOUT,         FBW_EC_CONNECTION_LOST, FBW_EC_AUTH,         FBW_EC_NO_DATABASE,
    FBW_EC_STATEMENT_TIMEOUT, FBW_EC_CANCELLED,     FBW_EC_UPDATE_CONFLICT, FBW_EC_LOCK_TIMEOUT,
    FBW_EC_LOCK_CONFLICT,   FBW_EC_DEADLOCK,        FBW_EC_UNIQUE,       FBW_EC_FOREIGN_KEY,
    FBW_EC_UNKNOWN_OBJECT,  FBW_EC_SYNTAX,
};

static fbw_errclass class_of(uint32_t code)
{
    for (size_t i = 0; i < sizeof code_class / sizeof code_class[0]; i++)
        if (code_class[i].code == code)
            return code_class[i].cls;
    return FBW_EC_OTHER;
}

/* Classes of the client-side return code. A wait that timed out also closed the connection. */
static class_set local_classes(int code)
{
    switch (code) {
    case FBW_E_EOF:
    case FBW_E_IO:
        return BIT(FBW_EC_CONNECTION_LOST);
    case FBW_E_TIMEOUT:
        return BIT(FBW_EC_TIMEOUT) | BIT(FBW_EC_CONNECTION_LOST);
    case FBW_E_AUTH:
        return BIT(FBW_EC_AUTH);
    default:
        return 0;
    }
}

static class_set code_classes(const fbw_err *err)
{
    class_set s = 0;
    for (int i = 0; i < err->ngds && i < FBW_ERR_GDS_MAX; i++) {
        fbw_errclass c = class_of(err->gds[i]);
        if (c != FBW_EC_OTHER)
            s |= BIT(c);
    }
    return s;
}

static class_set random_classes(const fbw_err *err)
{
    class_set s = 0;
    if (!fbw_err_has_gds(err, FBW_ISC_RANDOM))
        return 0;
    for (size_t i = 0; i < sizeof random_text / sizeof random_text[0]; i++)
        if (strstr(err->msg, random_text[i].text))
            s |= BIT(random_text[i].cls);
    return s;
}

/* Every class the error is in; 0 for no error and for an error of no class (OTHER). */
static class_set classes_of(const fbw_err *err)
{
    if (!err || err->code == FBW_OK)
        return 0;
    class_set s = local_classes(err->code) | code_classes(err);
    return s ? s : random_classes(err);
}

fbw_errclass fbw_err_classify(const fbw_err *err)
{
    if (!err || err->code == FBW_OK)
        return FBW_EC_NONE;
    class_set s = classes_of(err);
    for (size_t i = 0; i < sizeof by_rank / sizeof by_rank[0]; i++)
        if (s & BIT(by_rank[i]))
            return by_rank[i];
    return FBW_EC_OTHER;
}

int fbw_err_in_class(const fbw_err *err, fbw_errclass c)
{
    if (c == FBW_EC_NONE || c == FBW_EC_OTHER)
        return fbw_err_classify(err) == c;
    if ((unsigned)c >= FBW_EC_COUNT)
        return 0;
    return (classes_of(err) & BIT(c)) != 0;
}

static const char *const class_names[FBW_EC_COUNT] = {
    [FBW_EC_NONE] = "none",
    [FBW_EC_OTHER] = "other",
    [FBW_EC_SYNTAX] = "syntax",
    [FBW_EC_UNKNOWN_OBJECT] = "unknown_object",
    [FBW_EC_UNIQUE] = "unique",
    [FBW_EC_FOREIGN_KEY] = "foreign_key",
    [FBW_EC_UPDATE_CONFLICT] = "update_conflict",
    [FBW_EC_DEADLOCK] = "deadlock",
    [FBW_EC_LOCK_CONFLICT] = "lock_conflict",
    [FBW_EC_LOCK_TIMEOUT] = "lock_timeout",
    [FBW_EC_CONNECTION_LOST] = "connection_lost",
    [FBW_EC_AUTH] = "auth",
    [FBW_EC_NO_DATABASE] = "no_database",
    [FBW_EC_CANCELLED] = "cancelled",
    [FBW_EC_STATEMENT_TIMEOUT] = "statement_timeout",
    [FBW_EC_TIMEOUT] = "timeout",
};

const char *fbw_errclass_name(fbw_errclass c)
{
    if ((unsigned)c >= FBW_EC_COUNT || !class_names[c])
        return "unknown";
    return class_names[c];
}

/* Names compare with '-' and '_' alike and case-insensitively, so that an option can spell
 * "update-conflict" and the name table "update_conflict". */
static int same_name(const char *given, const char *name)
{
    for (; *given && *name; given++, name++) {
        char g = *given == '-' ? '_' : *given;
        if (g >= 'A' && g <= 'Z')
            g = (char)(g - 'A' + 'a');
        if (g != *name)
            return 0;
    }
    return *given == '\0' && *name == '\0';
}

int fbw_errclass_from_name(const char *name, fbw_errclass *out)
{
    for (int c = 0; name && c < FBW_EC_COUNT; c++) {
        if (same_name(name, class_names[c])) {
            *out = (fbw_errclass)c;
            return 1;
        }
    }
    return 0;
}
