"""The board's UART on the host, for `run --probe … --serial DEVICE|URL`.

Opened with pyserial (`serial_for_url`): a device (`/dev/ttyACM0`, `COM3`) or one of
its URLs (`socket://host:port`: QEMU's `-serial tcp:…`, a ser2net port; `rfc2217://…`).
pyserial is an optional dependency (the `board` extra), imported only here, when a
run asks for a serial port.
"""

from __future__ import annotations

import contextlib
from typing import Any

from ethosu_kit.core.errors import KitError

DEFAULT_BAUD = 115200


class SerialPort:
    """An open serial port, read without blocking (select on `fileno()`)."""

    def __init__(self, url: str, baud: int) -> None:
        try:
            # optional dependency (pip install 'ethosu-porting-kit[board]'): only a run
            # with --serial needs it, so only that run imports it
            import serial  # type: ignore[import-untyped, unused-ignore]  # noqa: PLC0415
        except ImportError:
            raise KitError(
                "--serial needs pyserial, which is not installed",
                hint="pip install pyserial (or the kit's extra: pip install "
                "'ethosu-porting-kit[board]')",
            ) from None
        self._errors: tuple[type[BaseException], ...] = (serial.SerialException, OSError)
        self.url = url
        try:
            self._port: Any = serial.serial_for_url(url, baudrate=baud, timeout=0)
        except (serial.SerialException, OSError, ValueError) as exc:
            raise KitError(
                f"--serial {url}: cannot open it ({exc})",
                hint="a device (/dev/ttyACM0) or a pyserial URL (socket://host:port); "
                "is the board connected, the port free (no terminal program on it)?",
            ) from None

    def fileno(self) -> int:
        return int(self._port.fileno())

    def read(self) -> bytes | None:
        """What arrived (call when readable); None when the other end closed."""
        try:
            data = self._port.read(max(1, self._port.in_waiting))
        except self._errors:
            return None  # pyserial says a socket's peer closed with an exception
        return bytes(data) if data else None

    def close(self) -> None:
        with contextlib.suppress(*self._errors):
            self._port.close()
