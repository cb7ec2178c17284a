"""The tier that limits a step, read from its row as the write-ups read their tables.

A row is a dict: level, rps, and per tier {busy: CPU used / capacity} (see tiers.py), and the web's
send_q; the previous row, if any, gives the trend. The rules, first match wins:

  1. a server tier (web, lb, db, redis) is saturated: the most saturated one;
     network: else, the link the load crosses carried SATURATED of its capacity or more, in
     either direction (a capacity is known where the netns lab caps the link: --rate; the
     TPS-trend write-up checked its bandwidth first);
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

A step is disturbed when work outside the tiers the sampler watches (a build, another run) used
DISTURBED cores or more over it, and a tier was slowed when it spent WAITED or more of its
capacity runnable but waiting for a core meanwhile. Such a step gets the verdict `disturbed`
instead of a name the outside work may have made (with one CPU-bound process beside it, a stepped
run once read `none` and `below limits` where the load tool limited):
  - in rules 1 and 3, when the tier reached SATURATED only by adding its waits to its own CPU
    and another tier was above IDLE: on a quiet machine that other tier might have saturated
    first. A tier whose own CPU reaches SATURATED is saturated whatever ran beside it, and one
    that alone asked for cores would have had the outside work's cores: both keep their name;
  - in rules 4 and 5, when a tier was at IDLE or more of its capacity: short of SATURATED, but
    the outside work also slows a tier in ways its own counters do not show (the loopback
    traffic's softirq work deferred to kernel threads, a console starved of CPU), and on a
    machine this busy a tier that close may have been the limit (test_steps saw wrk at 81 % and
    Locust at 84 % beside 1.4-1.9 cores of other work, both saturated on a quiet machine);
  - in rule 4's flat growth, when a tier of either step was slowed: the outside work, not a
    concurrency limit, may have held the rps back.
  - in rules 4 and 5 too, whatever the tiers read, when the machine itself was saturated
    (MACHINE_FULL of its cores busy): a tier then waits on work it is not charged for (its
    traffic's softirq work in kernel threads that are starved too), so no tier can show its
    limit (beside 1.7 cores of other work, test_steps read wrk at 12 % of a core, 'below
    limits', where a quiet machine saturates it).
A disturbed step on a machine with cores to spare, whose tiers all stayed under IDLE, keeps
`none` or `below limits`: none of them was near a limit the outside work could have hidden.
"""

SATURATED = 0.85        # share of a tier's capacity
IDLE = 0.50             # the web tier below this share is idle for rule 2
SENDQ_BACKLOG = 64 * 1024
LEVEL_GROWTH = 1.5
FLAT_GROWTH = 1.20
OPEN_SUCCESS = 0.90     # an open-model step that answered less than this share of its arrivals
DISTURBED = 0.25        # cores used outside the sampled tiers over a step
WAITED = 0.10           # share of a tier's capacity spent waiting for a core
MACHINE_FULL = 0.90     # share of the machine's cores busy (anything) that leaves none to spare

SERVER_TIERS = ("web", "lb", "db", "redis")

RULES = (
    "web/lb/db/redis: that tier was busy >= %d%% of its capacity (CPU + time runnable waiting for a "
    "core, over the threads that ran, capped by its cpuset)"
    % (SATURATED * 100),
    "client not reading: the largest Send-Q of one server socket > %d KiB (mean over the step) while web < %d%%"
    % (SENDQ_BACKLOG // 1024, IDLE * 100),
    "network: no server tier saturated, and the link the load crosses carried >= %d%% of its capacity "
    "(where the lab caps it: infra/lab up --netns --rate)" % (SATURATED * 100),
    "load: the load tool was busy >= %d%% of its capacity (CPU, waiting for a core, or blocked writing "
    "its own output; an open-model tool: it started >= 5%% fewer arrivals than asked), no server tier "
    "saturated" % (SATURATED * 100),
    "none: nothing saturated, rps grew < %d%% while the level grew >= %.1fx, or an open-model step "
    "answered < %d%% of its arrivals: a concurrency limit"
    % (round((FLAT_GROWTH - 1) * 100), LEVEL_GROWTH, OPEN_SUCCESS * 100),
    "below limits: nothing saturated and rps still grows with the level",
    "disturbed: >= %.2f cores went to work outside the tiers, and a tier reached %d%% only with its waits "
    "for a core while another was above %d%%, or no tier reached %d%% but one was above %d%% or the machine "
    "was %d%% busy, or rps was flat while a tier waited >= %d%% of its capacity: the outside work may have made "
    "the figures" % (DISTURBED, SATURATED * 100, IDLE * 100, SATURATED * 100, IDLE * 100, MACHINE_FULL * 100,
                     WAITED * 100),
)


def busy(row, tier):
    usage = row.get("tiers", {}).get(tier)
    return None if usage is None else usage.get("busy")


def net_share(row):
    """The busier direction of the load's link over its capacity, or None without a capacity."""
    cap = row.get("net_capacity_Bps")
    rates = [row.get(k) for k in ("net_rx_Bps", "net_tx_Bps") if row.get(k) is not None]
    return max(rates) / cap if cap and rates else None


def _share(row, tier, seconds):
    """A tier's `seconds` as a share of its capacity over the step, or None if unknown."""
    u = row.get("tiers", {}).get(tier) or {}
    try:
        return seconds(u) / u["elapsed_s"] / u["capacity"]
    except (KeyError, TypeError, ZeroDivisionError):
        return None


def own(row, tier):
    """The tier's own CPU (and, for the load tool, its time blocked writing) over its capacity:
    its busy share less its waits for a core."""
    return _share(row, tier, lambda u: u["cpu_s"] + u.get("writing_s", 0.0))


def waited(row, tier):
    """The share of its capacity the tier spent runnable but waiting for a core."""
    return _share(row, tier, lambda u: u["wait_s"] - u.get("writing_s", 0.0))


def disturbed(row):
    outside = row.get("outside_cores")
    return outside is not None and outside >= DISTURBED


def slowed(row):
    """The tiers of a disturbed step that waited for a core WAITED of their capacity or more."""
    if not disturbed(row):
        return []
    return [t for t in row.get("tiers", {}) if (waited(row, t) or 0.0) >= WAITED]


def _named(row, saturated, what):
    """(verdict, reason) for the saturated tiers [(busy, tier)]: the most saturated one. In a
    disturbed step, the most saturated of those that reached SATURATED on their own CPU; failing
    that, the most saturated one still when no other tier was above IDLE (the cores the outside
    work took would have gone to it alone), else `disturbed`."""
    share, tier = max(saturated)
    if not disturbed(row):
        return tier, what % (tier, round(share * 100))
    beside = "; %.2f cores ran outside the tiers" % row["outside_cores"]
    genuine = [(b, t) for b, t in saturated if (own(row, t) or 0.0) >= SATURATED]
    if genuine:
        share, tier = max(genuine)
        return tier, what % (tier, round(share * 100)) + beside
    others = [t for t in row.get("tiers", {}) if t != tier and (busy(row, t) or 0.0) >= IDLE]
    reason = what % (tier, round(share * 100)) + ", %d%% of it waiting for a core" % round(
        (waited(row, tier) or 0.0) * 100) + beside
    if others:
        return "disturbed", reason + ", and %s above %d%% too" % (", ".join(sorted(others)), IDLE * 100)
    return tier, reason


def verdict(row, previous=None):
    """(verdict, reason) for one row."""
    saturated = [(busy(row, t), t) for t in SERVER_TIERS
                 if busy(row, t) is not None and busy(row, t) >= SATURATED]
    if saturated:
        return _named(row, saturated, "%s at %d%% of its capacity")
    net = net_share(row)
    if net is not None and net >= SATURATED:
        return "network", "the %s link carried %d%% of its %.2f MB/s" % (
            row.get("net_iface", "?"), round(net * 100), row["net_capacity_Bps"] / 1e6)
    web = busy(row, "web")
    send_q = row.get("send_q_max")
    if send_q is not None and send_q > SENDQ_BACKLOG and (web is None or web < IDLE):
        return "client not reading", "Send-Q of one socket %d KiB, web at %d%%" % (send_q // 1024,
                                                                                  round((web or 0) * 100))
    load = busy(row, "load")
    if load is not None and load >= SATURATED:
        return _named(row, [(load, "load")], "%s tool at %d%% of its capacity")
    near = [(busy(row, t), t) for t in row.get("tiers", {}) if (busy(row, t) or 0.0) >= IDLE]
    if disturbed(row) and near:
        share, tier = max(near)
        return "disturbed", "%s at %d%% of its capacity, short of %d%% while %.2f cores ran outside the tiers" % (
            tier, round(share * 100), SATURATED * 100, row["outside_cores"])
    if disturbed(row) and (row.get("machine_busy") or 0.0) >= MACHINE_FULL:
        return "disturbed", "the machine was saturated (%d%% of its cores busy, %.2f cores outside the tiers): " \
            "no tier could show its limit" % (round(row["machine_busy"] * 100), row["outside_cores"])
    success = row.get("success")
    if success is not None and success < OPEN_SUCCESS:
        return "none", "%d%% of the arrivals answered, nothing saturated" % round(success * 100)
    if previous is not None and _flat(row, previous):
        growth = "rps %+d%% for level x%.1f" % (round((row["rps"] / previous["rps"] - 1) * 100),
                                                row["level"] / previous["level"])
        held = sorted(set(slowed(row)) | set(slowed(previous)))
        if held:
            return "disturbed", "%s, while %s waited for a core and work outside the tiers ran" % (
                growth, ", ".join(held))
        return "none", growth + ", nothing saturated"
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
