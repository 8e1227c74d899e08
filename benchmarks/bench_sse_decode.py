"""In-process benchmark of the bridge's own stream decoding: SSE reads -> OpenAI text events.

One OpenAI Chat Completions stream of N text events is cut into reads of R bytes (a fast
stream: each read carries dozens of events, cut anywhere) and decoded three ways, interleaved
run by run:

    json     the floor: split on blank lines by hand and `json.loads` each event (what the raw
             loop of bench_stream_throughput.py does per event, and nothing else)
    feed     `SseDecoder.feed` -> `SseEvent`s -> `OpenAIStreamDecoder.feed`
    plain    `SseDecoder.plain_events` -> data strings -> `OpenAIStreamDecoder.feed_data`
             (falling back to `feed` when a read is not plain events only)

Reported: the median µs per event of each over K runs and the median of the per-run ratios to
`json`. No sockets, no event loop: what the transport's loop costs per event on top of this
is measured by bench_stream_throughput.py.

    python benchmarks/bench_sse_decode.py                   # N=20000, R=65536, K=9
    python benchmarks/bench_sse_decode.py --read 16384 --runs 15
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence

from acp_bridge.providers.http import SseDecoder
from acp_bridge.providers.http._openai_stream import OpenAIStreamDecoder


def stream(events: int) -> bytes:
    first = {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"role": "assistant"}}]}
    lines = [f"data: {json.dumps(first)}\n\n"]
    for n in range(events):
        chunk = {
            "id": "c1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": f"tok{n} "}, "finish_reason": None}],
        }
        lines.append(f"data: {json.dumps(chunk)}\n\n")
    return "".join(lines).encode()


def by_json(reads: Sequence[bytes]) -> int:
    count, buffer = 0, b""
    for read in reads:
        *events, buffer = (buffer + read).split(b"\n\n")
        for event in events:
            json.loads(event[6:])
            count += 1
    return count


def by_feed(reads: Sequence[bytes]) -> int:
    sse, decoder, count = SseDecoder(), OpenAIStreamDecoder(model="m"), 0
    for read in reads:
        for item in sse.feed(read):
            count += len(decoder.feed(item))
    return count


def by_plain(reads: Sequence[bytes]) -> int:
    sse, decoder, count = SseDecoder(), OpenAIStreamDecoder(model="m"), 0
    for read in reads:
        datas = sse.plain_events(read)
        if datas is None:
            for item in sse.feed(read):
                count += len(decoder.feed(item))
        else:
            for data in datas:
                count += len(decoder.feed_data(data))
    return count


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--events", type=int, default=20000, help="text events N")
    parser.add_argument("--read", type=int, default=65536, help="bytes per read R")
    parser.add_argument("--runs", type=int, default=9, help="runs K")
    options = parser.parse_args(argv)
    body = stream(options.events)
    reads = [body[i : i + options.read] for i in range(0, len(body), options.read)]
    ways: dict[str, Callable[[Sequence[bytes]], int]] = {
        "json": by_json,
        "feed": by_feed,
        "plain": by_plain,
    }
    times: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(options.runs):
        for name, way in ways.items():
            start = time.perf_counter()
            way(reads)
            times[name].append((time.perf_counter() - start) * 1e6 / options.events)
    print(f"{options.events} events in reads of {options.read} bytes, {options.runs} runs")
    for name, samples in times.items():
        ratio = statistics.median(t / j for t, j in zip(samples, times["json"], strict=True))
        print(f"{name:6} {statistics.median(samples):7.2f} us/event   {ratio:.2f}x json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
