"""slack-sdk's retry handlers, with the sleep injected (tests never wait) and a ceiling on how
long a 429's ``Retry-After`` may hold a delivery."""

from __future__ import annotations

import random
from collections.abc import Callable

from slack_sdk.http_retry import (
    HttpRequest,
    HttpResponse,
    RateLimitErrorRetryHandler,
    RetryHandler,
    RetryState,
)


class PacedRateLimit(RateLimitErrorRetryHandler):
    """slack-sdk's 429 handler, with an injected sleep and a ceiling on the wait."""

    def __init__(self, sleep: Callable[[float], None], max_wait: float, retries: int) -> None:
        super().__init__(max_retry_count=retries)
        self.sleep = sleep
        self.max_wait = max_wait

    @staticmethod
    def _retry_after(response: HttpResponse) -> float:
        for name, values in response.headers.items():
            if name.lower() == "retry-after" and values and str(values[0]).strip().isdigit():
                return float(values[0])
        return 1.0 + random.random()

    def _can_retry(self, *, state: RetryState, request: HttpRequest,
                   response: HttpResponse | None = None, error: Exception | None = None) -> bool:
        return (super()._can_retry(state=state, request=request, response=response, error=error)
                and response is not None and self._retry_after(response) <= self.max_wait)

    def prepare_for_next_attempt(self, *, state: RetryState, request: HttpRequest,
                                 response: HttpResponse | None = None,
                                 error: Exception | None = None) -> None:
        assert response is not None
        state.next_attempt_requested = True
        self.sleep(self._retry_after(response))
        state.increment_current_attempt()


def with_sleep(handler_class: type[RetryHandler], sleep: Callable[[float], None],
                retries: int) -> RetryHandler:
    """A slack-sdk retry handler whose backoff sleeps through ``sleep`` (tests never wait)."""

    class Sleeping(handler_class):  # type: ignore[misc, valid-type]
        def prepare_for_next_attempt(self, *, state: RetryState, request: HttpRequest,
                                     response: HttpResponse | None = None,
                                     error: Exception | None = None) -> None:
            state.next_attempt_requested = True
            sleep(self.interval_calculator.calculate_sleep_duration(state.current_attempt))
            state.increment_current_attempt()

    return Sleeping(max_retry_count=retries)
