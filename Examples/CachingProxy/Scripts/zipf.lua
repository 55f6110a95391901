-- The load test's requests for wrk: GETs of the upstream's items with Zipf popularity, through
-- the proxy (`/fetch?url=…`) or through nginx (`/item/<n>`), every answer checked.
--
-- wrk -s zipf.lua URL -- MODE UPSTREAM ITEMS EXPONENT FORBIDDEN
--   MODE       proxy or nginx
--   UPSTREAM   the upstream's base URL, as the proxy is to fetch it
--   ITEMS      how many distinct items
--   EXPONENT   the Zipf exponent (1 is classic)
--   FORBIDDEN  (proxy) the base URL of an origin the proxy must refuse: one request in 50 goes
--              there, and must be answered 403
--
-- A 200's body starts with its own length in 8 digits, so a body cut short and served as a
-- success is seen. At the end it prints one JSON line: wrk's summary, the latency percentiles
-- and what the answers were.

local threads = {}
local counters = {
   "sent", "answered", "ok", "hits", "misses", "truncated", "forbiddenSent", "refused403", "bad502", "shed503",
   "other",
}

function setup(thread)
   table.insert(threads, thread)
   thread:set("id", #threads)
end

local function encode(s)
   return (s:gsub("[^%w]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

function init(args)
   mode, upstream, items, exponent, forbidden = args[1], args[2], tonumber(args[3]), tonumber(args[4]), args[5]
   math.randomseed(7919 * id)
   cdf = {}
   local total = 0
   for i = 1, items do
      total = total + 1 / (i ^ exponent)
      cdf[i] = total
   end
   for i = 1, items do cdf[i] = cdf[i] / total end
   for _, name in ipairs(counters) do _G[name] = 0 end
end

local function pick()
   local u = math.random()
   local low, high = 1, items
   while low < high do
      local mid = math.floor((low + high) / 2)
      if cdf[mid] < u then low = mid + 1 else high = mid end
   end
   return low
end

function request()
   sent = sent + 1
   local item = pick()
   if mode == "nginx" then
      return wrk.format("GET", "/item/" .. item)
   end
   if forbidden ~= nil and sent % 50 == 0 then
      forbiddenSent = forbiddenSent + 1
      return wrk.format("GET", "/fetch?url=" .. encode(forbidden .. "/item/" .. item))
   end
   return wrk.format("GET", "/fetch?url=" .. encode(upstream .. "/item/" .. item))
end

function response(status, headers, body)
   answered = answered + 1
   if status == 200 then
      ok = ok + 1
      local declared = tonumber(body:sub(1, 8))
      if declared == nil or #body ~= declared then truncated = truncated + 1 end
      local cache = headers["X-Cache"] or headers["x-cache"]
      if cache == "hit" or cache == "HIT" then
         hits = hits + 1
      else
         misses = misses + 1
      end
   elseif status == 403 then
      refused403 = refused403 + 1
   elseif status == 502 then
      bad502 = bad502 + 1
   elseif status == 503 then
      shed503 = shed503 + 1
   else
      other = other + 1
   end
end

function done(summary, latency, requests)
   local totals = {}
   for _, name in ipairs(counters) do totals[name] = 0 end
   for _, thread in ipairs(threads) do
      for _, name in ipairs(counters) do totals[name] = totals[name] + thread:get(name) end
   end
   local fields = {}
   for _, name in ipairs(counters) do table.insert(fields, string.format('"%s": %d', name, totals[name])) end
   local errors = summary.errors
   io.write(string.format(
      '{"requests": %d, "seconds": %.3f, "connectErrors": %d, "readErrors": %d, "writeErrors": %d, ' ..
      '"timeouts": %d, "p50": %.3f, "p99": %.3f, "p999": %.3f, %s}\n',
      summary.requests, summary.duration / 1e6, errors.connect, errors.read, errors.write, errors.timeout,
      latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency:percentile(99.9) / 1000,
      table.concat(fields, ", ")))
end
