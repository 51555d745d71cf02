"""Errors of the spotlab package: one base class, and builtin bases where one fits, so that
`except FileNotFoundError` and `except spotlab.SpotlabError` both work."""


class SpotlabError(Exception):
    """Base of every error this package raises."""


class ResultsNotFound(SpotlabError, FileNotFoundError):
    """The results file does not exist (or is not a regular file)."""


class NotSpotlabFile(SpotlabError, ValueError):
    """The file is not HDF5, is damaged, or is HDF5 without spotlab's `format` attribute."""


class DamagedFile(NotSpotlabFile):
    """The file's checksum (its first 512 bytes, docs/results-format.md) does not match its bytes:
    it changed after spotlab wrote it (a disk error, a truncation, an edit)."""


class FormatVersionError(SpotlabError, ValueError):
    """The file is spotlab's, but of a format version this package does not read."""


class BinaryNotFound(SpotlabError, FileNotFoundError):
    """No spotlab executable was found (SPOTLAB_BIN, build/spotlab, PATH)."""


class RunError(SpotlabError, RuntimeError):
    """`spotlab run` (or sweep) exited with a non-zero status; `returncode`, `cmd`, `stderr`."""

    def __init__(self, message, returncode=None, cmd=None, stdout="", stderr=""):
        super().__init__(message)
        self.returncode = returncode
        self.cmd = cmd
        self.stdout = stdout
        self.stderr = stderr


class NotInFile(SpotlabError, KeyError):
    """A table, series, metric, replication or point the file does not hold."""

    def __str__(self):  # KeyError would print the message with quotes around it
        return str(self.args[0]) if self.args else ""
