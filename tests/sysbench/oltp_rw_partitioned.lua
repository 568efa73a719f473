-- SPDX-License-Identifier: MIT
-- oltp_rw_partitioned.lua - sysbench's oltp_read_write, unchanged, except that each thread draws
-- its ids from its own slice of every table (thread t of N: ids t*S+1 .. (t+1)*S-range_size,
-- S = table_size / N). Same statements, same transactions, same driver calls; only the rows
-- differ. No row one thread reads or writes is ever written by another, so every result depends
-- on the thread's own order alone: a replay that keeps each connection's order must return the
-- same rows whatever the interleaving of the connections (tests/sysbench/xreplay.py).
-- Prepare with the stock oltp_read_write (same tables); use this script for `run` only.
dofile(assert(package.searchpath("oltp_read_write", package.path),
              "oltp_read_write.lua not found on sysbench's package.path"))

local draw = sysbench.rand.default

-- oltp_common's get_id() calls sysbench.rand.default(1, table_size) for every id it draws.
function sysbench.rand.default(lo, hi)
  local n = sysbench.opt.threads
  local span = math.floor((hi - lo + 1) / n)
  assert(span > sysbench.opt.range_size, "table_size / threads must exceed range_size")
  local base = lo + (sysbench.tid % n) * span
  return draw(base, base + span - sysbench.opt.range_size)
end
