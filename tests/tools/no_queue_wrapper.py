#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""no_queue_wrapper.py - no driver or tool source wraps a single library request in a queue
callback for fbw_client_run: one request runs through client.h's helpers (fbw_client_prepare,
_execute, _fetch, _commit, _rollback) or the fbw_client_complete loop
    do rc = fbw_client_complete(cl, fbw_blob_read(b, n)); while (rc == FBW_WAIT);
and fbw_client_run is kept for what it is for: several requests that share one write.

    no_queue_wrapper.py REPO_ROOT     check driver/, tools/ (exit 1, one line a hit)
    no_queue_wrapper.py --self-test   check the checker on sources it must and must not flag

A runner is fbw_client_run, or a function of the checked sources that passes a function-pointer
parameter of its own on to a runner (be_fbwire_round_trip, fbwire-pcap's rp_run_step). A queue
callback is a function of the checked sources named as an argument of a call to a runner.

fbw_client_run calls a callback again after each wait, so a callback that queues several requests
must remember what it queued already (client.h): it stores into the state it was given (x->done =
1, k->next++, ...) after its first library call or in the step of a loop around its calls. A callback that stores nothing there queues one
request a call, however it picks it (a switch over commit and rollback, a handle looked up first):
that is the fbw_client_complete loop written as a wrapper. Comments and string literals are
skipped.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs"))
import checkmain  # noqa: E402  (the docs checks' command line: usage, self-test first, count)

DIRS = ["driver", "tools"]

# Comments and string or character literals: blanked (newlines kept) before anything is parsed.
NOISE = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'', re.S)
# A function definition's head: name, parameter list, opening brace (at the start of a line).
DEFINITION = re.compile(r'^[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)[ \t]*\(([^;{}]*?)\)[ \t\n]*\{', re.M)
FN_POINTER_PARAM = re.compile(r'\(\s*\*\s*([A-Za-z_]\w*)\s*\)\s*\(\s*void\s*\*')
LIBRARY_CALL = re.compile(r'\bfbw_\w+\s*\(')
# A store into a member (x->done = 1, k->next++, r->rd.act += n, ++k->next): what remembers.
MEMBER_STORE = re.compile(r'(?:->|\.)\s*[A-Za-z_]\w*(?:\s*\[[^\]]*\])?\s*(?:[-+*/%&|^]?=(?!=)|\+\+|--)'
                          r'|(?:\+\+|--)\s*[A-Za-z_]\w*\s*(?:->|\.)')


def blank(text):
    return NOISE.sub(lambda m: re.sub(r'[^\n]', ' ', m.group(0)), text)


def definitions(text, shown):
    """{name: (shown, line, params, body)} of the function definitions of blanked C text."""
    found = {}
    for m in DEFINITION.finditer(text):
        if m.group(1) in ("if", "for", "while", "switch", "return", "sizeof"):
            continue
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        found[m.group(1)] = (shown, text.count("\n", 0, m.start()) + 1, m.group(2), text[m.end():i - 1])
    return found


def call_args(body, name):
    """The argument lists (as lists of stripped strings) of each call to name in body."""
    for m in re.finditer(r'\b%s\s*\(' % re.escape(name), body):
        depth, i, start, args = 1, m.end(), m.end(), []
        while i < len(body) and depth:
            c = body[i]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            if (c == "," and depth == 1) or depth == 0:
                args.append(body[start:i].strip())
                start = i + 1
            i += 1
        yield args


def runners(defs):
    """fbw_client_run and every function that passes a function-pointer parameter on to one."""
    found = {"fbw_client_run"}
    grew = True
    while grew:
        grew = False
        for name, (_, _, params, body) in defs.items():
            if name in found:
                continue
            ptrs = set(FN_POINTER_PARAM.findall(params))
            if ptrs and any(ptrs & set(args) for r in found for args in call_args(body, r)):
                found.add(name)
                grew = True
    return found


FOR_STEP = re.compile(r'\bfor\s*\([^;]*;[^;]*;([^)]*)\)')


def remembers(body):
    """The callback stores into its state after its first library call, or in the step of a loop
    around its calls (for (; r->act < n; r->act++) ...)."""
    first = LIBRARY_CALL.search(body)
    if first is None:
        return False
    return (MEMBER_STORE.search(body, first.end()) is not None or
            any(MEMBER_STORE.search(m.group(1)) for m in FOR_STEP.finditer(body)))


def check_sources(sources):
    """sources: [(shown name, C text)]. One line per single-request queue callback."""
    defs = {}
    for shown, text in sources:
        defs.update(definitions(blank(text), shown))
    run = runners(defs)
    hits, seen = [], set()
    for caller, (shown, line, _, body) in sorted(defs.items(), key=lambda d: d[1][:2]):
        for r in sorted(run):
            for args in call_args(body, r):
                for a in args:
                    if a in defs and a not in run and a not in seen and not remembers(defs[a][3]):
                        seen.add(a)
                        where, at = defs[a][0], defs[a][1]
                        hits.append((where, at, "%s:%d: %s, passed to %s by %s, queues one request and remembers "
                                    "nothing: call client.h's helper or loop on fbw_client_complete"
                                    % (where, at, a, r, caller)))
    return [h[2] for h in sorted(hits)]


def check_tree(root):
    sources = []
    for d in DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, d)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(".c"):
                    path = os.path.join(dirpath, name)
                    with open(path, encoding="utf-8", errors="replace") as f:
                        sources.append((os.path.relpath(path, root), f.read()))
    return check_sources(sources)


# Sources the checker must flag (each the way a program of this tree once ran one request) ...
BAD = [
    """static int queue_fetch(void *arg) { return fbw_stmt_fetch(arg); }
int fetch(conn *c, fbw_stmt *s, fbw_err *err) { return fbw_client_run(c->client, queue_fetch, s); }
""",
    """static int q_end(void *arg)
{
    step *r = arg;
    switch (r->kind) {
    case 1:
        return fbw_tx_commit(r->t);
    default:
        return fbw_tx_rollback_retaining(r->t);
    }
}
int run_step(step *r, int (*queue)(void *arg), fbw_err *err)
{
    int rc = fbw_client_run(r->cl, queue, r);
    return rc;
}
void do_end(step *r) { run_step(r, q_end, &r->e); }
""",
    """static int q_immediate2(void *arg)
{
    step *r = arg;
    r->out = (fbw_msgfmt){r->cols, r->n, r->n}; /* stored, but before the request: no progress */
    return fbw_exec_immediate2(r->c, r->tx, r->sql, r->len, NULL, NULL, &r->out, &r->res);
}
int round_trip(conn *c, int (*fn)(void *), void *arg, fbw_err *err)
{
    return waited(c, fbw_client_run(c->client, fn, arg), err);
}
void imm(conn *c, step *r) { round_trip(c, q_immediate2, r, NULL); }
""",
    """static int q_info(void *arg)
{
    step *r = arg;
    uint16_t h = 0;
    int rc = fbw_stmt_handle(r->st, &h);
    rc = rc ? rc : fbw_conn_info_request(r->c, 1, h, r->items, r->n, 64, &r->info);
    return rc;
}
void info(step *r) { fbw_client_run(r->cl, q_info, r); }
""",
]
# ... and sources it must not: queues of several requests that remember what they queued, a
# request run with client.h's helpers, runners themselves, callbacks of other functions.
GOOD = [
    """static int queue_execute(void *arg)
{
    plan *x = arg;
    if (x->end_first) {
        int rc = fbw_tx_commit(x->end_first);
        if (rc)
            return rc;
        x->end_first = NULL;
    }
    return fbw_stmt_execute(x->s, x->tx, x->vals, 0);
}
void exec(conn *c, plan *x) { fbw_client_run(c->client, queue_execute, x); }
""",
    """static int queue_bulk(void *arg)
{
    rows *k = arg;
    while (k->next < k->end) {
        int rc = fbw_stmt_execute(k->s, k->tx, k->vals + k->next, 0);
        if (rc)
            return rc;
        k->next++;
    }
    return FBW_OK;
}
int round_trip(conn *c, int (*fn)(void *), void *arg, fbw_err *err)
{
    return waited(c, fbw_client_run(c->client, fn, arg), err);
}
void bulk(conn *c, rows *k) { round_trip(c, queue_bulk, k, NULL); }
""",
    """static int queue_acts(void *arg)
{
    step *r = arg;
    int rc = FBW_OK;
    for (; r->act < r->end && rc == FBW_OK; r->act += rc == FBW_OK)
        rc = fbw_blob_read(r->blob, 64);
    return rc;
}
void acts(step *r) { fbw_client_run(r->cl, queue_acts, r); /* q_x(void *arg) { return fbw_x(); } */ }
""",
    """int fetch(conn *c, fbw_stmt *s, fbw_err *err)
{
    int rc;
    do
        rc = fbw_client_complete(c->client, fbw_stmt_fetch(s));
    while (rc == FBW_WAIT);
    return rc ? fail(c, rc, err) : fbw_client_prepare(c->client, s, NULL, "q", 1);
}
""",
    """static int by_name(const void *a, const void *b) { return fbw_strcmp(a, b); }
static void *worker(void *arg) { return fbw_run_one(arg); }
void sort(item *v, size_t n) { qsort(v, n, sizeof *v, by_name); pthread_create(&t, NULL, worker, v); }
""",
]


def self_test():
    fails = ["not flagged: BAD[%d]" % k for k, src in enumerate(BAD)
             if not check_sources([("bad%d.c" % k, src)])]
    for k, src in enumerate(GOOD):
        hits = check_sources([("good%d.c" % k, src)])
        if hits:
            fails.append("flagged: GOOD[%d] %s" % (k, hits))
    for f in fails:
        print("no_queue_wrapper.py self-test: " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(checkmain.run(sys.argv, "no_queue_wrapper", __doc__, self_test, check_tree))
