"""The tier that limits a step, read from its row as the write-ups read their tables.

A row is a dict: level, rps, and per tier {busy: CPU used / capacity} (see tiers.py), and the web's
send_q; the previous row, if any, gives the trend. The rules, first match wins:

  1. a server tier (web, lb, db, redis) is saturated: the most saturated one;
  2. client not reading: one of the server's sockets holds more than SENDQ_BACKLOG bytes not
     yet taken by its client while the web tier is idle (the TPS-trend write-up's rule: Send-Q
     backs up, so look at the load generator). One socket, not the sum: Send-Q counts bytes not
     yet acknowledged, and a client that pauses between requests (think time) delays its ACK of
     each response, so many connections each hold one response without any client failing to
     read; a client that stops reading fills its whole receive window;
  3. load: the load tool's cores are saturated (or it sat blocked writing its own output: the
     TPS-trend write-up's script printing into its console) while no server tier is;
  4. none: nothing is saturated, yet throughput grew less than FLAT_GROWTH while the level grew
     by LEVEL_GROWTH or more: the limit is concurrency (too few blocking workers, connections);
     or, in an open model, where the level is the arrival rate, fewer than OPEN_SUCCESS of the
     arrivals were answered with nothing saturated (the spray write-up: a blocked event loop or
     a pool too small for the rate);
  5. below limits: nothing saturated and still scaling.
"""

SATURATED = 0.85        # share of a tier's capacity
IDLE = 0.50             # the web tier below this share is idle for rule 2
SENDQ_BACKLOG = 64 * 1024
LEVEL_GROWTH = 1.5
FLAT_GROWTH = 1.20
OPEN_SUCCESS = 0.90     # an open-model step that answered less than this share of its arrivals

SERVER_TIERS = ("web", "lb", "db", "redis")

RULES = (
    "web/lb/db/redis: that tier was busy >= %d%% of its capacity (CPU + time runnable waiting for a "
    "core, over the threads that ran, capped by its cpuset)"
    % (SATURATED * 100),
    "client not reading: the largest Send-Q of one server socket > %d KiB (mean over the step) while web < %d%%"
    % (SENDQ_BACKLOG // 1024, IDLE * 100),
    "load: the load tool was busy >= %d%% of its capacity (CPU, waiting for a core, or blocked writing "
    "its own output; an open-model tool: it started >= 5%% fewer arrivals than asked), no server tier "
    "saturated" % (SATURATED * 100),
    "none: nothing saturated, rps grew < %d%% while the level grew >= %.1fx, or an open-model step "
    "answered < %d%% of its arrivals: a concurrency limit"
    % (round((FLAT_GROWTH - 1) * 100), LEVEL_GROWTH, OPEN_SUCCESS * 100),
    "below limits: nothing saturated and rps still grows with the level",
)


def busy(row, tier):
    usage = row.get("tiers", {}).get(tier)
    return None if usage is None else usage.get("busy")


def verdict(row, previous=None):
    """(verdict, reason) for one row."""
    saturated = [(busy(row, t), t) for t in SERVER_TIERS
                 if busy(row, t) is not None and busy(row, t) >= SATURATED]
    if saturated:
        share, tier = max(saturated)
        return tier, "%s at %d%% of its capacity" % (tier, round(share * 100))
    web = busy(row, "web")
    send_q = row.get("send_q_max")
    if send_q is not None and send_q > SENDQ_BACKLOG and (web is None or web < IDLE):
        return "client not reading", "Send-Q of one socket %d KiB, web at %d%%" % (send_q // 1024,
                                                                                  round((web or 0) * 100))
    load = busy(row, "load")
    if load is not None and load >= SATURATED:
        return "load", "load tool at %d%% of its capacity" % round(load * 100)
    success = row.get("success")
    if success is not None and success < OPEN_SUCCESS:
        return "none", "%d%% of the arrivals answered, nothing saturated" % round(success * 100)
    if previous is not None and _flat(row, previous):
        return "none", "rps %+d%% for level x%.1f, nothing saturated" % (
            round((row["rps"] / previous["rps"] - 1) * 100), row["level"] / previous["level"])
    return "below limits", "nothing saturated"


def _flat(row, previous):
    try:
        level_growth = float(row["level"]) / float(previous["level"])
        rps_growth = row["rps"] / previous["rps"]
    except (KeyError, TypeError, ZeroDivisionError):
        return False
    return level_growth >= LEVEL_GROWTH and rps_growth < FLAT_GROWTH


def verdicts(rows):
    """The verdict of every row, each against the row before it (failed rows get none)."""
    out, previous = [], None
    for row in rows:
        if row.get("failed"):
            out.append(("failed", row.get("error", "the load tool failed")))
            continue
        out.append(verdict(row, previous))
        previous = row
    return out
