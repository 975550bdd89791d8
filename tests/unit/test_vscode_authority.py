"""The Remote-SSH authority `gpu-tui code` passes: capitals escaped as Remote-SSH writes them."""

from __future__ import annotations

from gpu_tui.commands.sshconfig_cmd import vscode_authority


def test_lower_case_names_pass_through_and_capitals_are_escaped() -> None:
    assert vscode_authority("autodl-4090") == "ssh-remote+autodl-4090"
    assert vscode_authority("arm64-Eluer") == "ssh-remote+arm64-\\x45luer"
    assert vscode_authority("saO") == "ssh-remote+sa\\x4f"
