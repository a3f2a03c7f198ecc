"""Prometheus metrics of one app instance (a registry per app, so several apps can live
in one process, as in tests or when embedded)."""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST as PROMETHEUS_CONTENT_TYPE
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from sift.types import SearchResult

__all__ = ["PROMETHEUS_CONTENT_TYPE", "Metrics"]


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "sift_http_requests_total",
            "HTTP requests answered.",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "sift_http_request_duration_seconds",
            "Time to answer (to the first byte of a stream).",
            ["route"],
            registry=self.registry,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64),
        )
        self.errors = Counter(
            "sift_http_errors_total",
            "Error answers by stable error code.",
            ["route", "error_code"],
            registry=self.registry,
        )
        self.searches = Counter(
            "sift_searches_total",
            "Searches run, by collection, mode and why they stopped.",
            ["collection", "mode", "stopped_because"],
            registry=self.registry,
        )
        self.tool_calls = Counter(
            "sift_tool_calls_total",
            "Harness tool calls, by tool.",
            ["tool"],
            registry=self.registry,
        )
        self.in_flight = Gauge(
            "sift_requests_in_flight",
            "Requests holding a working slot (searches, ingests, deletes).",
            registry=self.registry,
        )
        self.queue_length = Gauge(
            "sift_queue_length",
            "Requests waiting for a working slot.",
            registry=self.registry,
        )
        self.queue_wait = Histogram(
            "sift_queue_wait_seconds",
            "Time a request waited for a working slot, by outcome (admitted, timed_out).",
            ["outcome"],
            registry=self.registry,
            buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16),
        )
        self.rejected = Counter(
            "sift_admission_rejected_total",
            "Requests answered 429, by reason.",
            ["reason"],
            registry=self.registry,
        )
        self.degraded = Counter(
            "sift_degraded_answers_total",
            "Searches answered past their deadline with the single-shot result, by "
            "collection and cause (deadline: the harness stopped at it; overrun: it did not).",
            ["collection", "cause"],
            registry=self.registry,
        )
        self.ready = Gauge(
            "sift_ready",
            "1 once every served store, embedder and policy is warm, else 0.",
            registry=self.registry,
        )

    def record_search(self, collection: str, result: SearchResult) -> None:
        self.searches.labels(collection, result.mode, result.stopped_because).inc()
        for turn in result.trace:
            for call in turn.calls:
                self.tool_calls.labels(call.tool).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)
