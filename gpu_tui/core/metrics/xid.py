"""What an NVIDIA Xid says, in words (issue 26: "an Xid is shown as the fault it is").

The kernel driver logs an Xid when the GPU or its driver meets an error; dcgm-exporter's
`DCGM_FI_DEV_XID_ERRORS` holds the last one per GPU. The meanings are NVIDIA's (the "Xid Errors"
table of its GPU deployment and management documentation), shortened to what a person watching
the fleet acts on; an Xid not in the table is named by its number alone.
"""

from __future__ import annotations

from gpu_tui.core.i18n import N_, _

__all__ = ["XID_WORDS", "xid_text"]

XID_WORDS: dict[int, str] = {
    13: N_("graphics engine exception (often the application: an out-of-range access)"),
    31: N_("GPU memory page fault (often the application)"),
    32: N_("invalid or corrupted push buffer stream"),
    43: N_("GPU stopped processing (a user application fault)"),
    45: N_("preemptive cleanup after a process was killed or ended"),
    48: N_("double-bit ECC error: drain the node and reset the GPU"),
    61: N_("internal micro-controller breakpoint: reset the GPU"),
    62: N_("internal micro-controller halt: reset the GPU"),
    63: N_("ECC page retirement or row remapping recorded"),
    64: N_("ECC page retirement or row remapping failed: reset the GPU"),
    69: N_("graphics engine class error"),
    74: N_("NVLink error: check the link and reset the GPU"),
    79: N_("the GPU has fallen off the bus: reset it or reboot the node"),
    92: N_("high single-bit ECC error rate"),
    94: N_("contained ECC error: restart the application"),
    95: N_("uncontained ECC error: drain the node and reset the GPU"),
    119: N_("GSP RPC timeout: reset the GPU"),
    120: N_("GSP error: reset the GPU"),
}


def xid_text(xid: int) -> str:
    """`Xid 79: the GPU has fallen off the bus: reset it or reboot the node`, in the language in force."""
    words = XID_WORDS.get(xid)
    return f"Xid {xid}: {_(words)}" if words else f"Xid {xid}"
