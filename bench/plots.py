"""PNG plots of the networked benchmarks (matplotlib, Agg backend: no display), written to
bench/out/ (git-ignored)."""

from __future__ import annotations

from pathlib import Path

from . import cpu

OUT_DIR = Path(__file__).resolve().parent / "out"


def pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_services(points: list[dict], out_dir: Path = OUT_DIR) -> list[Path]:
    """Latency (p50, p99) and throughput (Act, raw, their ratio) against offered load, and the
    CPU per action by process, from bench_services' load points."""
    plt = pyplot()
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [_services_latency(plt, points, out_dir), _services_throughput(plt, points, out_dir),
             _services_cpu(plt, points, out_dir)]
    if all("watched" in p for p in points):
        paths.append(_services_watch(plt, points, out_dir))
    return paths


def _services_latency(plt, points: list[dict], out_dir: Path) -> Path:
    """Act's latency percentiles (and raw appends') against offered load."""
    tables = [p["tables"] for p in points]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for key, style in (("p50", "o-"), ("p90", "^:"), ("p99", "s-"), ("p99.9", "x--")):
        ax.plot(tables, [p["act"]["lat_us"][key] / 1e3 for p in points], style,
                label=f"Act {key}")
    ax.plot(tables, [p["raw"]["lat_us"]["p99"] / 1e3 for p in points], "k.--",
            label="raw append p99")
    if all("watched" in p for p in points):
        ax.plot(tables, [p["watched"]["lat_us"]["p99"] / 1e3 for p in points], "rs:",
                label="Act p99, every bot watching its seat")
    ax.set(xscale="log", yscale="log", xlabel="offered load (tables, 6 bots each)",
           ylabel="latency (ms)", title="Act latency against offered load")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    return save_figure(fig, out_dir / "services_latency.png")


def _services_throughput(plt, points: list[dict], out_dir: Path) -> Path:
    """Act's and raw appends' throughput against offered load, and their ratio."""
    tables = [p["tables"] for p in points]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(tables, [p["act"]["per_s"] for p in points], "o-", label="Act (actions/s)")
    ax.plot(tables, [p["raw"]["per_s"] for p in points], "s--",
            label="raw guarded appends/s (N subjects)")
    ax.set(xscale="log", yscale="log", xlabel="offered load (tables / subjects)",
           ylabel="per second", title="Throughput against offered load")
    ax.grid(True, which="both", alpha=0.3)
    right = ax.twinx()
    right.plot(tables, [p["ratio"] for p in points], "g^:", label="Act / raw")
    right.set_ylabel("Act / raw")
    right.set_ylim(bottom=0)
    lines = ax.get_legend_handles_labels()
    more = right.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], loc="upper left")
    return save_figure(fig, out_dir / "services_throughput.png")


def _services_cpu(plt, points: list[dict], out_dir: Path) -> Path:
    """The CPU per action of each process, stacked, against offered load."""
    tables = [p["tables"] for p in points]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    columns = (*cpu.SERVICE_ORDER, "nats", cpu.CLIENT)
    grouped = [cpu.group(p["act"]["cpu_ms"], columns) for p in points]
    bottom = [0.0] * len(points)
    xs = range(len(points))
    for c in columns:
        values = [g[c] for g in grouped]
        ax.bar(xs, values, bottom=bottom, label=c)
        bottom = [b + v for b, v in zip(bottom, values)]
    ax.axhline(1.5, color="k", linestyle=":", label="goal: services+NATS 1.5 ms")
    ax.set_xticks(list(xs), [str(t) for t in tables])
    ax.set(xlabel="offered load (tables)", ylabel="CPU ms per action",
           title="CPU per action by process")
    ax.legend(fontsize="small", ncol=2)
    return save_figure(fig, out_dir / "services_cpu.png")


def _services_watch(plt, points: list[dict], out_dir: Path) -> Path:
    """CPU per action of the services and NATS: nobody watching against every bot watching."""
    tables = [p["tables"] for p in points]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    xs = range(len(points))
    ax.bar([x - 0.2 for x in xs], [p["act"]["cpu_total_ms"] for p in points], 0.4,
           label="nobody watching")
    ax.bar([x + 0.2 for x in xs], [p["watched"]["cpu_total_ms"] for p in points], 0.4,
           label="every bot watching its seat")
    ax.set_xticks(list(xs), [str(t) for t in tables])
    ax.set(xlabel="offered load (tables, 6 bots each)",
           ylabel="CPU ms per action, services + NATS",
           title="What watching costs: CPU per action")
    ax.legend()
    return save_figure(fig, out_dir / "services_watch.png")


def plot_shards(rows: list[dict], out_dir: Path = OUT_DIR) -> list[Path]:
    """Aggregate throughput (raw and Act) against shards on the 3-node cluster."""
    plt = pyplot()
    out_dir.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    shards = [r["shards"] for r in rows]
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r["raw"]["per_s"] for r in rows], 0.4, label="raw appends/s")
    ax.bar([x + 0.2 for x in xs], [r["act"]["per_s"] if r.get("act") else 0 for r in rows],
           0.4, label="Act actions/s")
    ax.set_xticks(list(xs), [str(s) for s in shards])
    ax.set(xlabel="shards (streams) on 3 nodes, R3", ylabel="per second",
           title="Aggregate throughput against shards")
    ax.legend()
    return [save_figure(fig, out_dir / "cluster_shards.png")]


def plot_capacity(rows: list[dict], limit_ms: float, out_dir: Path = OUT_DIR) -> Path:
    """bench_capacity's loads: the ack latency (p50, p99, p99.9; the limit the p99 must stay
    under) and the CPU (cores kept busy by the services and NATS, and by the clients; ms per
    action) against tables."""
    from .bench_capacity import client_ms, cores, server_ms
    plt = pyplot()
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = sorted(rows, key=lambda r: r["tables"])
    tables = [r["tables"] for r in rows]
    fig, (lat, busy) = plt.subplots(2, 1, figsize=(7, 7), sharex=True)
    for key, style in (("p50", "o-"), ("p99", "s-"), ("p99.9", "x--")):
        lat.plot(tables, [r["lat_us"][key] / 1e3 for r in rows], style, label=f"ack {key}")
    lat.axhline(limit_ms, color="k", linestyle=":", label=f"limit: p99 < {limit_ms:g} ms")
    failed = [r for r in rows if not r["ok"]]
    lat.plot([r["tables"] for r in failed], [r["lat_us"]["p99"] / 1e3 for r in failed], "rX",
             markersize=10, label="load failed")
    lat.set(yscale="log", ylabel="Act sent to reply (ms)",
            title="Human-paced tables: latency and CPU against load")
    lat.grid(True, which="both", alpha=0.3)
    lat.legend(fontsize="small")
    busy.plot(tables, [cores(r, r["servers"]) for r in rows], "o-",
              label="cores busy: services + NATS")
    busy.plot(tables, [cores(r, r["clients"]) for r in rows], "^-", label="cores busy: clients")
    busy.set(xlabel="tables (6 bots watching their seats, spectators)", ylabel="cores")
    busy.grid(True, alpha=0.3)
    per_action = busy.twinx()
    per_action.plot(tables, [server_ms(r) for r in rows], "s:", color="tab:green",
                    label="ms per action: services + NATS")
    per_action.plot(tables, [client_ms(r) for r in rows], "v:", color="tab:red",
                    label="ms per action: clients")
    per_action.set_ylabel("CPU ms per action")
    per_action.set_ylim(bottom=0)
    left, right = busy.get_legend_handles_labels(), per_action.get_legend_handles_labels()
    busy.legend(left[0] + right[0], left[1] + right[1], fontsize="small", loc="upper left")
    return save_figure(fig, out_dir / "capacity.png")


def save_figure(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    import matplotlib.pyplot as plt
    plt.close(fig)
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path
