"""The perf lab's reading of wrk reports (captured outputs of wrk 4.1)."""

from __future__ import annotations

import math

import pytest

from perf.wrk import SocketErrors, WrkError, parse_metric, parse_time_ms, parse_wrk, wrk_argv

HEALTHY = """\
Running 3s test @ http://127.0.0.1:18123/collections/abc/stats
  1 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     4.16ms    1.91ms  22.00ms   90.01%
    Req/Sec     3.96k     1.10k    5.79k    60.00%
  Latency Distribution
     50%    3.42ms
     75%    5.14ms
     90%    5.83ms
     99%   12.12ms
  11839 requests in 3.01s, 2.17MB read
Requests/sec:   3938.60
Transfer/sec:    738.52KB
"""

SLOW_WITH_ERRORS = """\
Running 2s test @ http://127.0.0.1:51001/collections/99757a95-f758-499f-a170-bea93b2d8bcf/stats
  1 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   536.00ms  265.20ms   1.18s    70.00%
    Req/Sec    28.76     14.33    57.00     70.59%
  Latency Distribution
     50%  502.10ms
     75%  695.04ms
     90%  945.11ms
     99%    1.18s \n\
  50 requests in 2.01s, 9.60KB read
  Socket errors: connect 0, read 2, write 0, timeout 7
  Non-2xx or 3xx responses: 3
Requests/sec:     24.89
Transfer/sec:      4.78KB
"""

NOTHING_ANSWERED = """\
Running 3s test @ http://127.0.0.1:18998/
  1 threads and 4 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     0.00us    0.00us   0.00us    -nan%
    Req/Sec     0.00      0.00     0.00      -nan%
  Latency Distribution
     50%    0.00us
     75%    0.00us
     90%    0.00us
     99%    0.00us
  0 requests in 3.01s, 0.00B read
Requests/sec:      0.00
Transfer/sec:       0.00B
"""

WITHOUT_LATENCY_FLAG = """\
Running 1s test @ http://127.0.0.1:18999/
  1 threads and 4 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   812.00us    2.17ms    1.05m    72.76%
    Req/Sec   685.27     93.84   810.00     72.73%
  750 requests in 1.10s, 0.94MB read
Requests/sec:    681.66
Transfer/sec:      0.85MB
"""


def test_a_healthy_run() -> None:
    result = parse_wrk(HEALTHY)

    assert result.requests == 11839
    assert result.duration_s == pytest.approx(3.01)
    assert result.requests_per_s == pytest.approx(3938.60)
    assert (result.avg_ms, result.stdev_ms, result.max_ms) == pytest.approx((4.16, 1.91, 22.00))
    assert (result.p50_ms, result.p75_ms, result.p90_ms, result.p99_ms) == pytest.approx(
        (3.42, 5.14, 5.83, 12.12)
    )
    assert result.socket_errors == SocketErrors()
    assert result.socket_errors.total == 0
    assert result.non_2xx == 0


def test_seconds_socket_errors_and_non_2xx() -> None:
    result = parse_wrk(SLOW_WITH_ERRORS)

    assert result.max_ms == pytest.approx(1180.0)
    assert result.p99_ms == pytest.approx(1180.0)  # "1.18s " with wrk's trailing blank
    assert result.p50_ms == pytest.approx(502.10)
    assert result.socket_errors == SocketErrors(connect=0, read=2, write=0, timeout=7)
    assert result.socket_errors.total == 9
    assert str(result.socket_errors) == "0/2/0/7"
    assert result.non_2xx == 3
    assert result.requests_per_s == pytest.approx(24.89)


def test_no_completed_request_has_no_latency_rather_than_zero() -> None:
    result = parse_wrk(NOTHING_ANSWERED)

    assert result.requests == 0
    assert result.requests_per_s == 0.0
    assert math.isnan(result.avg_ms)
    assert math.isnan(result.max_ms)
    assert result.p99_ms is not None
    assert math.isnan(result.p99_ms)


def test_without_latency_flag_there_are_no_percentiles_and_units_scale() -> None:
    result = parse_wrk(WITHOUT_LATENCY_FLAG)

    assert result.avg_ms == pytest.approx(0.812)
    assert result.max_ms == pytest.approx(63_000.0)
    assert (result.p50_ms, result.p99_ms) == (None, None)
    assert result.duration_s == pytest.approx(1.10)


@pytest.mark.parametrize(
    ("text", "ms"),
    [("812.00us", 0.812), ("3.42ms", 3.42), ("1.20s", 1200.0), ("2.00m", 120_000.0), ("1.00h", 3_600_000.0)],
)
def test_time_units(text: str, ms: float) -> None:
    assert parse_time_ms(text) == pytest.approx(ms)


def test_nan_times_and_metric_suffixes() -> None:
    assert math.isnan(parse_time_ms("-nan"))
    assert parse_metric("3.96k") == pytest.approx(3960.0)
    assert parse_metric("1.2M") == pytest.approx(1_200_000.0)
    assert parse_metric("283.40") == pytest.approx(283.40)


@pytest.mark.parametrize("text", ["", "unable to connect to 127.0.0.1:1 Connection refused", HEALTHY[:200]])
def test_what_is_not_a_report_is_an_error(text: str) -> None:
    with pytest.raises(WrkError):
        parse_wrk(text)


@pytest.mark.parametrize("bad", ["12", "3.4 ms", "fast"])
def test_bad_values_are_errors(bad: str) -> None:
    with pytest.raises(WrkError):
        parse_time_ms(bad)


def test_the_command_line() -> None:
    assert wrk_argv("http://127.0.0.1:1/x", threads=1, connections=16, duration_s=30) == [
        "wrk",
        "-t1",
        "-c16",
        "-d30s",
        "--latency",
        "http://127.0.0.1:1/x",
    ]
