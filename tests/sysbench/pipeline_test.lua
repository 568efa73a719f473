#!/usr/bin/env sysbench
-- SPDX-License-Identifier: MIT
-- pipeline_test.lua - --fbwire-pipeline=transaction against a live server (fbwire driver only).
--
--   fbwire-sysbench tests/sysbench/pipeline_test.lua --db-driver=fbwire --fbwire-db=... \
--       --fbwire-pipeline=transaction --fbwire-wire-crypt=disabled --pipe-case=CASE run
--
-- --pipe-case=single (--threads=1 --events=1):
--   results    ten executions of one prepared point select in one transaction, only the last
--              read: counter READ and nrows 0 until read, then exactly its row; a 20-row range
--              read; DML booked as writes; the transaction committed
--   unique     a unique violation at statement k of n: reported at COMMIT as a restart-event
--              error with its own gds code and SQLSTATE, naming statement k; nothing committed
--   lock       a lock conflict (another connection holds the row) at statement k of n: the same
--   killed     the attachment is deleted from MON$ATTACHMENTS by another connection while its
--              transaction's statements are queued: COMMIT fails as a lost connection, nothing
--              was committed, con:reconnect() works
--   ten-k      one transaction of 10,000 pipelined SELECTs of 100 wide rows each (far more reply
--              bytes than socket buffers hold), the last one read: exactly its 100 rows
-- --pipe-case=deadlock (--threads=2 --events=2 --fbwire-lock-timeout=3): two transactions
--   update rows 1 and 2 in opposite order, each after the other has its first row locked; one
--   fails (ignorable lock/deadlock error, reported at COMMIT naming the statement) and is retried.
--   Run prepare, run, cleanup: cleanup checks that each event's updates were committed exactly
--   once.
-- Prints "PIPELINE OK <case>" at the end; any failed check raises an error.

local ffi = require("ffi")
ffi.cdef [[ int usleep(unsigned int usec); ]]

sysbench.cmdline.options = {
   ["pipe-case"] = { "single or deadlock", "single" },
}

local T = sysbench.sql.type
local CNT = { OTHER = 0, READ = 1, WRITE = 2 }
local checks = 0

local function eq(got, want, what)
   checks = checks + 1
   if got ~= want then
      error(string.format("FAIL %s: got %s, want %s", what, tostring(got), tostring(want)), 2)
   end
end

local function rs_of(con) -- db_conn_t.rs (offset 0x28 in sysbench 1.0.20), as in api_test.lua
   return ffi.cast("sql_result *", ffi.cast("char *", con) + 0x28)
end

local function count(con, where)
   return tonumber(con:query_row("SELECT COUNT(*) FROM fbw_pipe WHERE " .. where))
end

-- A statement that must fail at COMMIT with a restart-event error naming statement k of n.
local function commit_fails(con, errno, state, k, n, what)
   local ok, err = pcall(con.query, con, "COMMIT")
   eq(ok, false, what .. ": COMMIT fails")
   eq(type(err), "table", what .. ": restart-event error")
   eq(err.errcode, sysbench.error.RESTART_EVENT, what .. ": errcode")
   local msg = ffi.string(err.sql_errmsg)
   print(what .. ": " .. msg)
   if errno then eq(err.sql_errno, errno, what .. ": sql_errno") end
   if state then eq(ffi.string(err.sql_state), state, what .. ": SQLSTATE") end
   eq(msg:find(string.format("statement %d of %d of the pipelined transaction", k, n), 1, true) ~= nil,
      true, what .. ": names the statement in '" .. msg .. "'")
   return msg
end

local function setup(con)
   con:query("RECREATE TABLE fbw_pipe (id INTEGER NOT NULL PRIMARY KEY, v INTEGER, " ..
             "c CHAR(120), pad CHAR(60))")
   local ins = con:prepare("INSERT INTO fbw_pipe (id, v, c, pad) VALUES (?, 0, ?, ?)")
   local pid, pc, pp = ins:bind_create(T.INT), ins:bind_create(T.CHAR, 120), ins:bind_create(T.CHAR, 60)
   ins:bind_param(pid, pc, pp)
   con:query("BEGIN")
   for i = 1, 1000 do -- a pipelined bulk load as well
      pid:set(i)
      pc:set(string.format("%011d-%s", i, string.rep("c", 100)))
      pp:set(string.rep("p", 59))
      ins:execute()
   end
   con:query("COMMIT")
   ins:close()
   eq(count(con, "id > 0"), 1000, "rows loaded by one pipelined transaction")
end

local function results(con)
   local sel = con:prepare("SELECT v, c FROM fbw_pipe WHERE id = ?")
   local p = sel:bind_create(T.INT)
   sel:bind_param(p)
   local upd = con:prepare("UPDATE fbw_pipe SET v = v + 1 WHERE id = ?")
   local u = upd:bind_create(T.INT)
   upd:bind_param(u)
   con:query("BEGIN")
   local rs
   for i = 1, 10 do
      p:set(100 + i)
      rs = sel:execute()
      eq(tonumber(rs_of(con).counter), CNT.READ, "pipelined SELECT counted as a read")
      eq(tonumber(rs.nrows), 4294967295, "nrows unknown (UINT32_MAX) before the rows are read")
   end
   local row = rs:fetch_row()
   eq(tonumber(row[2]:sub(1, 11)), 110, "the last of ten executions gives its own row")
   eq(rs:fetch_row(), nil, "one row only")
   eq(tonumber(rs.nrows), 1, "nrows once read")
   for i = 1, 3 do
      u:set(i)
      upd:execute()
      eq(tonumber(rs_of(con).counter), CNT.WRITE, "pipelined UPDATE counted as a write")
   end
   local rng = con:prepare("SELECT id FROM fbw_pipe WHERE id BETWEEN ? AND ? ORDER BY id")
   local a, b = rng:bind_create(T.INT), rng:bind_create(T.INT)
   rng:bind_param(a, b)
   a:set(501)
   b:set(520)
   rs = rng:execute()
   local n = 0
   while true do
      row = rs:fetch_row()
      if not row then break end
      n = n + 1
      eq(tonumber(row[1]), 500 + n, "range row " .. n)
   end
   eq(n, 20, "range rows")
   con:query("COMMIT")
   eq(count(con, "id <= 3 AND v = 1"), 3, "pipelined updates committed")
   sel:close()
   upd:close()
   rng:close()
end

-- n statements, statement k is `bad`; the others update rows 900+i.
local function failing_transaction(con, n, k, bad)
   local upd = con:prepare("UPDATE fbw_pipe SET v = v + 1 WHERE id = ?")
   local u = upd:bind_create(T.INT)
   upd:bind_param(u)
   con:query("BEGIN")
   for i = 1, n do
      if i == k then
         bad()
      else
         u:set(900 + i)
         upd:execute()
      end
   end
   upd:close()
end

local function unique(con)
   local ins = con:prepare("INSERT INTO fbw_pipe (id, v) VALUES (?, 7)")
   local p = ins:bind_create(T.INT)
   ins:bind_param(p)
   failing_transaction(con, 6, 4, function() p:set(5); ins:execute() end)
   commit_fails(con, 335544665, "23000", 4, 6, "unique violation")
   eq(count(con, "id > 900 AND v <> 0"), 0, "nothing of the failed transaction committed")
   ins:close()
end

local function lock(con, drv)
   local other = drv:connect()
   other:query("BEGIN")
   other:query("UPDATE fbw_pipe SET v = v + 100 WHERE id = 50")
   local upd = con:prepare("UPDATE fbw_pipe SET v = v + 1 WHERE id = ?")
   local p = upd:bind_create(T.INT)
   upd:bind_param(p)
   failing_transaction(con, 5, 3, function() p:set(50); upd:execute() end)
   local msg = commit_fails(con, nil, nil, 3, 5, "lock conflict")
   eq(msg:find("lock", 1, true) ~= nil or msg:find("deadlock", 1, true) ~= nil, true,
      "lock conflict reported")
   other:query("ROLLBACK")
   other:disconnect()
   eq(count(con, "(id > 900 OR id = 50) AND v <> 0"), 0, "nothing of the failed transaction committed")
   upd:close()
end

local function killed(con, drv)
   local id = con:query_row("SELECT CURRENT_CONNECTION FROM RDB$DATABASE")
   local upd = con:prepare("UPDATE fbw_pipe SET v = v + 1 WHERE id = ?")
   local p = upd:bind_create(T.INT)
   upd:bind_param(p)
   con:query("BEGIN")
   for i = 1, 5 do
      p:set(950 + i)
      upd:execute()
   end
   local killer = drv:connect()
   killer:query("DELETE FROM MON$ATTACHMENTS WHERE MON$ATTACHMENT_ID = " .. id)
   killer:disconnect()
   local ok, err = pcall(con.query, con, "COMMIT")
   eq(ok, false, "COMMIT after the attachment was killed fails")
   print("killed attachment: " .. tostring(err))
   eq(type(err), "string", "a lost connection is fatal")
   con:reconnect()
   eq(count(con, "id > 950 AND v <> 0"), 0, "nothing committed by the killed transaction")
   upd:close()
end

local function ten_k(con)
   local rng = con:prepare("SELECT id, c, pad FROM fbw_pipe WHERE id BETWEEN ? AND ?")
   local a, b = rng:bind_create(T.INT), rng:bind_create(T.INT)
   rng:bind_param(a, b)
   con:query("BEGIN")
   local rs, first
   for i = 1, 10000 do
      first = 1 + (i * 37) % 900
      a:set(first)
      b:set(first + 99)
      rs = rng:execute()
   end
   local n = 0
   while true do
      local row = rs:fetch_row()
      if not row then break end
      eq(tonumber(row[1]), first + n, "row of the last range")
      n = n + 1
   end
   eq(n, 100, "the last of 10,000 pipelined ranges has its 100 rows")
   con:query("COMMIT")
   rng:close()
end

local function single(drv)
   local con = drv:connect()
   setup(con)
   results(con)
   unique(con)
   lock(con, drv)
   killed(con, drv)
   ten_k(con)
   con:query("DROP TABLE fbw_pipe")
   con:disconnect()
end

-- ---------------------------------------------------------------- deadlock (two threads)

local dcon, dupd, dparam

function thread_init(thread_id)
   if sysbench.opt.pipe_case ~= "deadlock" then return end
   dcon = sysbench.sql.driver():connect()
   dupd = dcon:prepare("UPDATE fbw_pipe SET v = v + 1 WHERE id = ?")
   dparam = dupd:bind_create(T.INT)
   dupd:bind_param(dparam)
end

function thread_done(thread_id)
   if dcon then
      dupd:close()
      dcon:disconnect()
   end
end

function prepare()
   local con = sysbench.sql.driver():connect()
   con:query("RECREATE TABLE fbw_pipe (id INTEGER NOT NULL PRIMARY KEY, v INTEGER, " ..
             "c CHAR(120), pad CHAR(60))")
   con:query("INSERT INTO fbw_pipe (id, v) VALUES (1, 0)")
   con:query("INSERT INTO fbw_pipe (id, v) VALUES (2, 0)")
   con:disconnect()
end

-- cleanup after the deadlock run: both rows were updated by both events, each exactly once.
function cleanup()
   local con = sysbench.sql.driver():connect()
   if sysbench.opt.pipe_case == "deadlock" then
      local v1 = tonumber(con:query_row("SELECT v FROM fbw_pipe WHERE id = 1"))
      local v2 = tonumber(con:query_row("SELECT v FROM fbw_pipe WHERE id = 2"))
      eq(v1, 2, "row 1 updated once by each committed transaction")
      eq(v2, 2, "row 2 updated once by each committed transaction")
      print("PIPELINE OK deadlock (" .. checks .. " checks)")
   end
   con:query("DROP TABLE IF EXISTS fbw_pipe")
   con:disconnect()
end

local attempts = 0

local function deadlock_event(thread_id)
   local first, second = 1 + thread_id % 2, 2 - thread_id % 2
   attempts = attempts + 1
   if attempts > 1 and thread_id % 2 == 1 then
      -- a retry: both transactions time out on each other's lock at the same moment, so two
      -- retries started at once meet again, and again (a livelock: it once ran past ctest's
      -- 400 s). Thread 1 lets thread 0's retry finish first.
      ffi.C.usleep(1000000)
   end
   dcon:query("BEGIN")
   dparam:set(first)
   dupd:execute()
   -- a read is a sync point: the first UPDATE is on the server (its row locked) after it
   local sel = dcon:query_row("SELECT v FROM fbw_pipe WHERE id = " .. first)
   if attempts == 1 then
      ffi.C.usleep(500000) -- both threads hold their first row now
   end
   dparam:set(second)
   dupd:execute()
   dcon:query("COMMIT")
   print(string.format("thread %d committed after %d attempt(s) (%s)", thread_id, attempts, sel))
end

function event(thread_id)
   if sysbench.opt.pipe_case == "deadlock" then
      return deadlock_event(thread_id)
   end
   single(sysbench.sql.driver())
   print("PIPELINE OK single (" .. checks .. " checks)")
end
