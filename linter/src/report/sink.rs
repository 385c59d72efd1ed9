//! Where a report goes, as it is rendered: stdout, or a file that is replaced whole once the
//! report is complete (written to a temporary file beside it, then renamed over it), so that a
//! report of any size is never held in memory and an interrupted run leaves the old file as it
//! was.

use std::fmt;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct Sink {
    to: To,
    /// The first write that failed; nothing is written after it.
    error: Option<io::Error>,
}

#[derive(Debug)]
enum To {
    Stdout(BufWriter<io::StdoutLock<'static>>),
    File {
        temporary: BufWriter<tempfile::NamedTempFile>,
        path: PathBuf,
    },
}

impl Sink {
    pub fn stdout() -> Sink {
        Sink {
            to: To::Stdout(BufWriter::new(io::stdout().lock())),
            error: None,
        }
    }

    /// A report that replaces `path` when [`Sink::finish`] succeeds.
    pub fn file(path: &Path) -> Result<Sink, String> {
        let temporary =
            crate::source::temporary_beside(path).map_err(|err| cannot_write(Some(path), &err))?;
        Ok(Sink {
            to: To::File {
                temporary: BufWriter::new(temporary),
                path: path.to_owned(),
            },
            error: None,
        })
    }

    /// Ends the report: flushes stdout, or puts the file in place. A reader of stdout that went
    /// away (`| head`) is no error.
    pub fn finish(self) -> Result<(), String> {
        match self.to {
            To::Stdout(mut stdout) => match self.error.map_or_else(|| stdout.flush(), Err) {
                Err(err) if err.kind() != io::ErrorKind::BrokenPipe => {
                    Err(cannot_write(None, &err))
                }
                _ => Ok(()),
            },
            To::File { temporary, path } => {
                let written = match self.error {
                    Some(err) => Err(err),
                    None => temporary.into_inner().map_err(|err| err.into_error()),
                };
                written
                    .and_then(|file| crate::source::put_in_place(file, &path))
                    .map_err(|err| cannot_write(Some(&path), &err))
            }
        }
    }
}

fn cannot_write(path: Option<&Path>, err: &io::Error) -> String {
    match path {
        Some(path) => format!("cannot write the report to {}: {err}", path.display()),
        None => format!("cannot write the report: {err}"),
    }
}

impl fmt::Write for Sink {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        if self.error.is_some() {
            return Err(fmt::Error);
        }
        let written = match &mut self.to {
            To::Stdout(stdout) => stdout.write_all(text.as_bytes()),
            To::File { temporary, .. } => temporary.write_all(text.as_bytes()),
        };
        written.map_err(|err| {
            self.error = Some(err);
            fmt::Error
        })
    }
}
