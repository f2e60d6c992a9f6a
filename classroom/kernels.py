"""A learner keeps at most a few kernels: the next one shuts the least recently used idle one, as the culler would."""

from __future__ import annotations

from typing import Any

from jupyter_server.services.kernels.kernelmanager import AsyncMappingKernelManager
from traitlets import Integer

__all__ = ["RoomKernelManager"]


class RoomKernelManager(AsyncMappingKernelManager):  # type: ignore[misc]
    """Jupyter Server's kernel manager with a cap on live kernels, so a learner's memory has a bound.

    Learners leave every lesson open as they go on; each open lesson holds a kernel (about 100 MiB here). Culling by
    idle time alone lets a fast learner hold nine. The cap shuts down, when a kernel starts beyond it, the idle
    kernel that was used longest ago: exactly what the idle culler would do to it later, so the learner sees what
    they see after a culled kernel (the lesson's notebook is kept; Run All starts a new kernel).
    """

    max_kernels = Integer(3, config=True, help="Live kernels a learner may keep; 0 for no cap.")

    async def start_kernel(self, *args: Any, **kwargs: Any) -> str:  # type: ignore[override]
        kernel_id: str = await super().start_kernel(*args, **kwargs)
        if self.max_kernels:
            await self._make_room(kernel_id)
        return kernel_id

    async def _make_room(self, new: str) -> None:
        idle = sorted(
            (
                kernel
                for kernel_id, kernel in self._kernels.items()
                if kernel_id != new and getattr(kernel, "execution_state", "") != "busy"
            ),
            key=lambda kernel: kernel.last_activity,
        )
        while len(self._kernels) > self.max_kernels and idle:
            oldest = idle.pop(0)
            self.log.warning(
                "Shutting down the '%s' kernel %s, idle since %s: %d kernels is this learner's cap",
                oldest.kernel_name,
                oldest.kernel_id,
                oldest.last_activity,
                self.max_kernels,
            )
            await self.shutdown_kernel(oldest.kernel_id)
