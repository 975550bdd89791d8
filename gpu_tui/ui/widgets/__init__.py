"""Dashboard widgets, one per module."""

from gpu_tui.ui.widgets.fleet_bar import FleetBar
from gpu_tui.ui.widgets.fleet_summary import FleetSummary
from gpu_tui.ui.widgets.gpu_panel import GpuPanel
from gpu_tui.ui.widgets.host_panel import HostPanel
from gpu_tui.ui.widgets.instance_table import InstanceTable

__all__ = ["FleetBar", "FleetSummary", "GpuPanel", "HostPanel", "InstanceTable"]
