import Foundation
import MoonProcess
import MoonReport

/// moon's own messages: what a command prints on stdout and its errors and
/// warnings on stderr, all through `OutputSink` (`write(2)`). A failed write
/// (`2>/dev/full`, a closed pipe) loses the message and nothing else:
/// Foundation's `FileHandle.write` traps on one, and `print`'s buffered stdio
/// kept SIGPIPE as the only way to notice a reader that went away.
///
/// Text that may hold what came from a graph file, a node or a recording
/// (names, descriptions, commands, messages, paths) passes `TextWidth`'s
/// sanitizer line by line, as node output does: no escape sequence and no
/// C0 or C1 control character reaches the terminal except moon's own styling,
/// which only `raw` writes carry (already-rendered diagnostics).
package enum Console {
    package static var standardOutput: OutputSink { OutputSink.standardOutput }
    package static var standardError: OutputSink { OutputSink.standardError }

    /// From the start: moon notices a closed stdout or stderr from the
    /// failed write (`EPIPE`), never by being killed with SIGPIPE in the
    /// middle of a run or of writing its state; a file-size limit
    /// (`ulimit -f`) fails a write with EFBIG instead of killing moon with
    /// SIGXFSZ, so the store's and the cache's warnings say so. moon in the
    /// background is not stopped by the terminal (SIGTTIN, SIGTTOU) while
    /// its nodes run on. (The spawner resets all of them in every node.)
    package static func takeOverSignals() {
        for signal in [SIGPIPE, SIGXFSZ, SIGTTIN, SIGTTOU] { ProcessLauncher.ignoreSignal(signal) }
    }

    /// `text` and a line break on stdout, each line sanitized.
    package static func line(_ text: String) {
        standardOutput.write(safe(text) + "\n")
    }

    /// `text` on stdout as it is, each line sanitized (it brings its own line breaks).
    package static func write(_ text: String) {
        standardOutput.write(safe(text))
    }

    /// `moon: error: MESSAGE` on stderr.
    package static func error(_ message: String) {
        standardError.write("moon: error: " + safe(message) + "\n")
    }

    /// `moon: warning: MESSAGE` on stderr.
    package static func warning(_ message: String) {
        standardError.write("moon: warning: " + safe(message) + "\n")
    }

    /// `moon: note: MESSAGE` on stderr: something the user may not expect, and no problem.
    package static func note(_ message: String) {
        standardError.write("moon: note: " + safe(message) + "\n")
    }

    /// A message on stderr, each line sanitized.
    package static func errorLine(_ text: String) {
        standardError.write(safe(text) + "\n")
    }

    /// Text that is safe already and may carry moon's own styling (rendered
    /// diagnostics, whose renderer replaces control characters itself).
    package static func rawError(_ text: String) {
        standardError.write(text)
    }

    /// The exit code, given the command's: 141 (128 + SIGPIPE) when stdout's
    /// reader went away before moon could say everything, as for a command
    /// killed by SIGPIPE; when stdout failed otherwise (`> /dev/full`), an
    /// error that says so, and 1 if the command had succeeded: its output is lost.
    package static func exitCode(_ code: Int32) -> Int32 {
        let failure = standardOutput.failure
        if failure == 0 { return code }
        if failure == EPIPE { return code == 0 ? 128 + SIGPIPE : code }
        error("cannot write to standard output: \(String(cString: strerror(failure)))")
        return code == 0 ? 1 : code
    }

    /// Every line of `text` through the node-output sanitizer (colour off:
    /// no escape sequence survives); line breaks kept.
    package static func safe(_ text: String) -> String {
        guard TextWidth.needsSanitizing(text, keepingNewlines: true) else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { TextWidth.sanitize(String($0), keepColor: false) }
            .joined(separator: "\n")
    }
}

/// A warning of moon itself (not of a graph file), on stderr.
package func warn(_ message: String) {
    Console.warning(message)
}
