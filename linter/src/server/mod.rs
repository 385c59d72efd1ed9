//! `placement server`: the linter as a language server (LSP over stdio, with rust-analyzer's
//! `lsp-server` and `lsp-types`), for editors.
//!
//! When the client is initialized, the workspace is linted whole on a thread of its own, and
//! every file's findings are published. An open buffer is linted as it is typed, its unsaved
//! text checked with what the whole run learnt of the other files ([`Kept`]), and, when it
//! changes what a Python file tells the others, the files that asked about it: changes that
//! arrive together are one lint. Saving a file lints the workspace again (a Rust file's callers
//! are checked again then). Code actions allow a rule on a finding's line and explain a rule.
//! Logs go to stderr; stdout is the protocol's.

// `lsp_types::Uri` (fluent-uri's) keeps parsed parts in cells, but its hash and equality are
// those of its text: a map keyed by URIs is sound, as rust-analyzer's are.
#![allow(clippy::mutable_key_type)]

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crossbeam_channel::{Receiver, Sender, select};
use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{
    DidChangeNotebookDocument, DidChangeTextDocument, DidCloseNotebookDocument,
    DidCloseTextDocument, DidOpenNotebookDocument, DidOpenTextDocument, DidSaveNotebookDocument,
    DidSaveTextDocument, Notification as _, PublishDiagnostics, ShowMessage,
};
use lsp_types::request::{CodeActionRequest, ExecuteCommand, Request as _};
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams,
    CodeActionProviderCapability, CodeDescription, Command, Diagnostic, DiagnosticSeverity,
    ExecuteCommandOptions, ExecuteCommandParams, InitializeParams, MessageType, Notebook,
    NotebookCellSelector, NotebookDocumentSyncOptions, NotebookSelector, NumberOrString, OneOf,
    Position, PublishDiagnosticsParams, Range, SaveOptions, ServerCapabilities, ServerInfo,
    ShowMessageParams, TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions, TextEdit, Uri, WorkspaceEdit,
};
use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};

use crate::config::CliLevels;
use crate::diagnostic::Level;
use crate::discover::Options;
use crate::project::{self, Kept, LintedFile, NotLinted};
use crate::rules;

mod notebooks;

use notebooks::OpenNotebook;

/// The command behind the "explain this rule" code action.
const EXPLAIN: &str = "placement.explain";

/// Runs the server on stdin and stdout until the client says `exit`.
pub fn run() -> Result<(), String> {
    let (connection, io_threads) = Connection::stdio();
    let (id, params) = connection
        .initialize_start()
        .map_err(|err| format!("the client did not initialize: {err}"))?;
    // A bad `initialize` is answered with why, and ends the server. The message shown after
    // the answer is also what makes sure the answer was written: the transport takes a message
    // only once it has written the one before.
    let refuse = |id: RequestId, why: String| {
        let code = lsp_server::ErrorCode::InvalidParams as i32;
        let _ =
            (connection.sender).send(Message::Response(Response::new_err(id, code, why.clone())));
        let shown = ShowMessageParams {
            typ: MessageType::ERROR,
            message: format!("placement server: {why}"),
        };
        let shown = Notification::new(ShowMessage::METHOD.to_owned(), shown);
        let _ = connection.sender.send(Message::Notification(shown));
        why
    };
    let params: InitializeParams = serde_json::from_value(params).map_err(|err| {
        refuse(
            id.clone(),
            format!("the client's `initialize` is not LSP's: {err}"),
        )
    })?;
    let options = initialization_options(params.initialization_options.as_ref())
        .map_err(|why| refuse(id.clone(), why))?;
    let root = workspace_root(&params)
        .or_else(|| std::env::current_dir().ok())
        .ok_or_else(|| {
            refuse(
                id.clone(),
                "no workspace folder, and no current folder".to_owned(),
            )
        })?;
    let result = serde_json::json!({
        "capabilities": capabilities(),
        "serverInfo": ServerInfo {
            name: "placement".to_owned(),
            version: Some(env!("CARGO_PKG_VERSION").to_owned()),
        },
    });
    connection
        .initialize_finish(id, result)
        .map_err(|err| format!("the client did not finish initializing: {err}"))?;
    log(&format!("linting {}", root.display()));
    let mut server = Server::new(connection, root, options);
    server.lint_workspace();
    let served = server.serve();
    drop(server);
    io_threads
        .join()
        .map_err(|err| format!("the connection failed: {err}"))?;
    served
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::FULL),
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                    include_text: Some(false),
                })),
                ..TextDocumentSyncOptions::default()
            },
        )),
        notebook_document_sync: Some(OneOf::Left(NotebookDocumentSyncOptions {
            notebook_selector: vec![NotebookSelector::ByNotebook {
                notebook: Notebook::String("jupyter-notebook".to_owned()),
                cells: Some(vec![NotebookCellSelector {
                    language: "python".to_owned(),
                }]),
            }],
            save: Some(true),
        })),
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: vec![EXPLAIN.to_owned()],
            ..ExecuteCommandOptions::default()
        }),
        ..ServerCapabilities::default()
    }
}

/// The levels of `initializationOptions`: `{"levels": {"implicit_device": "deny", "warnings":
/// "deny"}}`, as `-D implicit_device -D warnings` would set them.
fn initialization_options(options: Option<&serde_json::Value>) -> Result<Options, String> {
    let mut cli = CliLevels::default();
    let levels = options.and_then(|options| options.get("levels"));
    if let Some(levels) = levels {
        let levels = levels
            .as_object()
            .ok_or("`initializationOptions.levels` must be an object of rule names to levels")?;
        for (name, level) in levels {
            let level: Level = (level.as_str())
                .ok_or_else(|| format!("`initializationOptions.levels.{name}` must be a string"))?
                .parse()
                .map_err(|err| format!("`initializationOptions.levels.{name}`: {err}"))?;
            if name == "warnings" {
                cli.warnings = Some(level);
            } else if rules::find(name).is_some() {
                cli.levels.push((rules::bare_name(name).to_owned(), level));
            } else {
                return Err(format!(
                    "`initializationOptions.levels.{name}`: no rule named `{name}`"
                ));
            }
        }
    }
    Ok(Options {
        config_file: None,
        cli,
    })
}

/// The first workspace folder, or the root the client gave.
#[allow(deprecated)] // `root_uri`, for clients that send no workspace folders
fn workspace_root(params: &InitializeParams) -> Option<PathBuf> {
    let folder = params
        .workspace_folders
        .as_ref()
        .and_then(|folders| folders.first())
        .map(|folder| &folder.uri);
    folder.or(params.root_uri.as_ref()).and_then(path_of)
}

/// A whole run's result: what it keeps, and the files with diagnostics; or why the workspace
/// could not be linted.
type WholeRun = Result<(Kept, Vec<LintedFile>), String>;

struct Server {
    connection: Connection,
    root: PathBuf,
    options: Options,
    /// What the last whole run keeps.
    kept: Option<Kept>,
    /// Whole runs finish here.
    done: (Sender<WholeRun>, Receiver<WholeRun>),
    /// Whether a whole run is under way, and whether another was asked for meanwhile.
    running: bool,
    again: bool,
    /// The open buffers' texts, notebooks' cells included.
    open: HashMap<Uri, String>,
    /// The open notebooks, by the notebook's URI.
    notebooks: HashMap<Uri, OpenNotebook>,
    /// The buffers opened or changed since they were last linted.
    edited: HashSet<Uri>,
    /// The files whose diagnostics are shown, to clear those that have none any more.
    shown: HashSet<Uri>,
}

impl Server {
    fn new(connection: Connection, root: PathBuf, options: Options) -> Server {
        Server {
            connection,
            root,
            options,
            kept: None,
            done: crossbeam_channel::unbounded(),
            running: false,
            again: false,
            open: HashMap::new(),
            notebooks: HashMap::new(),
            edited: HashSet::new(),
            shown: HashSet::new(),
        }
    }

    fn serve(&mut self) -> Result<(), String> {
        loop {
            let receiver = self.connection.receiver.clone();
            let done = self.done.1.clone();
            select! {
                recv(receiver) -> message => {
                    let Ok(message) = message else { return Ok(()) };
                    if self.handle(message)? {
                        return Ok(());
                    }
                    // Changes that came together are linted once, at their last text.
                    let mut edited = self.take_edited();
                    while let Ok(message) = receiver.try_recv() {
                        if self.handle(message)? {
                            return Ok(());
                        }
                        edited.extend(self.take_edited());
                    }
                    for uri in edited {
                        self.lint_buffer(&uri);
                    }
                }
                recv(done) -> whole => {
                    if let Ok(whole) = whole {
                        self.finished(whole);
                    }
                }
            }
        }
    }

    /// Handles one message; whether it was the client's `exit` after `shutdown`.
    fn handle(&mut self, message: Message) -> Result<bool, String> {
        match message {
            Message::Request(request) => {
                let shutdown = self
                    .connection
                    .handle_shutdown(&request)
                    .map_err(|err| format!("the connection failed: {err}"))?;
                if shutdown {
                    return Ok(true);
                }
                self.request(request);
            }
            Message::Notification(notification) => self.notification(notification),
            Message::Response(_) => {}
        }
        Ok(false)
    }

    fn request(&mut self, request: Request) {
        let response = match request.method.as_str() {
            CodeActionRequest::METHOD => match serde_json::from_value(request.params) {
                Ok(params) => Response::new_ok(request.id, self.code_actions(params)),
                Err(err) => invalid(request.id, &err),
            },
            ExecuteCommand::METHOD => match serde_json::from_value(request.params) {
                Ok(params) => {
                    self.execute(params);
                    Response::new_ok(request.id, serde_json::Value::Null)
                }
                Err(err) => invalid(request.id, &err),
            },
            _ => Response::new_err(
                request.id,
                lsp_server::ErrorCode::MethodNotFound as i32,
                format!("placement does not answer `{}`", request.method),
            ),
        };
        self.send(Message::Response(response));
    }

    fn notification(&mut self, notification: Notification) {
        let params = notification.params;
        match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                if let Ok(params) =
                    serde_json::from_value::<lsp_types::DidOpenTextDocumentParams>(params)
                {
                    self.open
                        .insert(params.text_document.uri.clone(), params.text_document.text);
                    self.edited.insert(params.text_document.uri);
                }
            }
            DidChangeTextDocument::METHOD => {
                if let Ok(params) =
                    serde_json::from_value::<lsp_types::DidChangeTextDocumentParams>(params)
                    && let Some(change) = params.content_changes.into_iter().last()
                {
                    let uri = params.text_document.uri;
                    self.open.insert(uri.clone(), change.text);
                    self.edited.insert(uri);
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Ok(params) =
                    serde_json::from_value::<lsp_types::DidCloseTextDocumentParams>(params)
                {
                    let uri = params.text_document.uri;
                    self.open.remove(&uri);
                    // The file as saved, and what that changes of the others.
                    if let Some(path) = path_of(&uri) {
                        self.update(&path, None);
                    }
                }
            }
            DidSaveTextDocument::METHOD | DidSaveNotebookDocument::METHOD => self.lint_workspace(),
            DidOpenNotebookDocument::METHOD => {
                if let Ok(params) =
                    serde_json::from_value::<lsp_types::DidOpenNotebookDocumentParams>(params)
                    && let Some(path) = path_of(&params.notebook_document.uri)
                {
                    notebooks::open_texts(&mut self.open, params.cell_text_documents);
                    let notebook = OpenNotebook {
                        path,
                        cells: params.notebook_document.cells,
                    };
                    let uri = params.notebook_document.uri;
                    self.notebooks.insert(uri.clone(), notebook);
                    self.edited.insert(uri);
                }
            }
            DidChangeNotebookDocument::METHOD => {
                if let Ok(params) =
                    serde_json::from_value::<lsp_types::DidChangeNotebookDocumentParams>(params)
                {
                    let uri = params.notebook_document.uri;
                    if let Some(notebook) = self.notebooks.get_mut(&uri) {
                        notebook.apply(params.change, &mut self.open);
                        self.edited.insert(uri);
                    }
                }
            }
            DidCloseNotebookDocument::METHOD => {
                if let Ok(params) =
                    serde_json::from_value::<lsp_types::DidCloseNotebookDocumentParams>(params)
                    && let Some(notebook) = self.notebooks.remove(&params.notebook_document.uri)
                {
                    for cell in notebook.cells {
                        self.open.remove(&cell.document);
                        self.publish(cell.document, Vec::new());
                    }
                    self.update(&notebook.path, None);
                }
            }
            _ => {}
        }
    }

    /// The buffers opened or changed since this was last asked.
    fn take_edited(&mut self) -> HashSet<Uri> {
        std::mem::take(&mut self.edited)
    }
}

impl Server {
    /// Lints the whole workspace on a thread of its own (once more after the run under way, if
    /// one is).
    fn lint_workspace(&mut self) {
        if self.running {
            self.again = true;
            return;
        }
        self.running = true;
        let (root, options, done) = (self.root.clone(), self.options.clone(), self.done.0.clone());
        std::thread::spawn(move || {
            let started = Instant::now();
            let whole = project::discover(std::slice::from_ref(&root), &options)
                .map_err(|err| err.to_string())
                .map(|found| {
                    let (outcome, kept) = project::lint_and_keep(found, &|| {});
                    (kept, outcome.files)
                });
            log(&format!(
                "linted the workspace in {:.0?}",
                started.elapsed()
            ));
            let _ = done.send(whole);
        });
    }

    /// Publishes what a whole run found, for the files that are not open with other text, and
    /// lints the open buffers again with what it learnt.
    fn finished(&mut self, whole: WholeRun) {
        self.running = false;
        match whole {
            Ok((kept, files)) => {
                let mut shown = std::mem::take(&mut self.shown);
                for file in &files {
                    let Some(uri) = uri_of(&file.unit.path) else {
                        continue;
                    };
                    shown.remove(&uri);
                    if !self.open.contains_key(&uri) {
                        self.publish(uri, diagnostics(file));
                    }
                }
                // Fixed since the last run.
                shown.retain(|uri| !self.open.contains_key(uri));
                for uri in shown {
                    self.publish(uri, Vec::new());
                }
                self.kept = Some(kept);
                let open: Vec<Uri> = (self.open.keys().chain(self.notebooks.keys()))
                    .cloned()
                    .collect();
                for uri in open {
                    self.lint_buffer(&uri);
                }
            }
            Err(why) => {
                log(&why);
                self.notify::<ShowMessage>(ShowMessageParams {
                    typ: MessageType::ERROR,
                    message: format!("placement could not lint the workspace: {why}"),
                });
            }
        }
        if std::mem::take(&mut self.again) {
            self.lint_workspace();
        }
    }

    /// Lints an open buffer's text, or an open notebook's cells, and what it changes of the
    /// other files, and publishes their diagnostics.
    fn lint_buffer(&mut self, uri: &Uri) {
        let text = match self.notebooks.get(uri) {
            Some(notebook) => Some((notebook.path.clone(), notebook.json(&self.open))),
            None => path_of(uri).zip(self.open.get(uri).cloned()),
        };
        if let Some((path, text)) = text {
            self.update(&path, Some(text));
        }
    }

    /// Takes `text` as the file at `path` (its saved text when `None`), and publishes the
    /// diagnostics of the files that changes: an open notebook's on its cells.
    fn update(&mut self, path: &Path, text: Option<String>) {
        let Some(kept) = &mut self.kept else { return };
        let started = Instant::now();
        let files = match kept.update(path, text) {
            Ok(files) => files,
            Err(NotLinted::NotInProject) => return,
            Err(NotLinted::Internal(why)) => {
                log(&format!("{}: {why}", path.display()));
                return;
            }
        };
        let names: Vec<&str> = files
            .iter()
            .map(|file| file.unit.relative.as_str())
            .collect();
        log(&format!(
            "linted {} in {:.1} ms",
            names.join(", "),
            started.elapsed().as_secs_f64() * 1e3
        ));
        for file in files {
            let notebook =
                (self.notebooks.values()).find(|notebook| notebook.path == file.unit.path);
            let found = match notebook {
                Some(notebook) => notebooks::by_cell(&file, &notebook.cells),
                None => uri_of(&file.unit.path)
                    .map(|uri| vec![(uri, diagnostics(&file))])
                    .unwrap_or_default(),
            };
            for (uri, diagnostics) in found {
                self.publish(uri, diagnostics);
            }
        }
    }

    fn publish(&mut self, uri: Uri, diagnostics: Vec<Diagnostic>) {
        if diagnostics.is_empty() {
            self.shown.remove(&uri);
        } else {
            self.shown.insert(uri.clone());
        }
        self.notify::<PublishDiagnostics>(PublishDiagnosticsParams {
            uri,
            diagnostics,
            version: None,
        });
    }

    /// For each of the linter's diagnostics in the request: allow its rule on its line, and
    /// explain its rule.
    fn code_actions(&self, params: CodeActionParams) -> Vec<CodeActionOrCommand> {
        let uri = params.text_document.uri;
        let text = (self.open.get(&uri).cloned())
            .or_else(|| std::fs::read_to_string(path_of(&uri)?).ok())
            .unwrap_or_default();
        let comment =
            match path_of(&uri).is_some_and(|path| path.extension().is_some_and(|e| e == "rs")) {
                true => "//",
                false => "#",
            };
        let mut actions = Vec::new();
        let mut explained = HashSet::new();
        for diagnostic in params.context.diagnostics {
            let Some(NumberOrString::String(rule)) = diagnostic.code.clone() else {
                continue;
            };
            if diagnostic.source.as_deref() != Some("placement") || rules::find(&rule).is_none() {
                continue;
            }
            let line = diagnostic.range.start.line;
            let indent: String = (text.lines().nth(line as usize).unwrap_or_default().chars())
                .take_while(|c| c.is_whitespace())
                .collect();
            let at = Position { line, character: 0 };
            let edit = TextEdit {
                range: Range { start: at, end: at },
                new_text: format!("{indent}{comment} placement: allow({rule})\n"),
            };
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: format!("Allow `{rule}` on this line"),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![diagnostic]),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(uri.clone(), vec![edit])])),
                    ..WorkspaceEdit::default()
                }),
                ..CodeAction::default()
            }));
            if explained.insert(rule.clone()) {
                actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: format!("Explain `{rule}`"),
                    kind: Some(CodeActionKind::EMPTY),
                    command: Some(Command {
                        title: format!("Explain `{rule}`"),
                        command: EXPLAIN.to_owned(),
                        arguments: Some(vec![serde_json::Value::String(rule)]),
                    }),
                    ..CodeAction::default()
                }));
            }
        }
        actions
    }

    /// `placement.explain RULE`: the rule's documentation, shown by the client.
    fn execute(&self, params: ExecuteCommandParams) {
        let rule = (params.command == EXPLAIN)
            .then(|| params.arguments.first()?.as_str().and_then(rules::find))
            .flatten();
        let Some(rule) = rule else { return };
        self.notify::<ShowMessage>(ShowMessageParams {
            typ: MessageType::INFO,
            message: rules::explanation(rule),
        });
    }

    fn notify<N: lsp_types::notification::Notification>(&self, params: N::Params) {
        self.send(Message::Notification(Notification::new(
            N::METHOD.to_owned(),
            params,
        )));
    }

    fn send(&self, message: Message) {
        // A client gone is seen by the loop, which then ends.
        let _ = self.connection.sender.send(message);
    }
}

fn invalid(id: RequestId, err: &serde_json::Error) -> Response {
    Response::new_err(
        id,
        lsp_server::ErrorCode::InvalidParams as i32,
        format!("invalid parameters: {err}"),
    )
}

/// A file's diagnostics in LSP's terms ([`diagnostic`]). A notebook's are none: its buffer
/// as a text document is its JSON, not the code its positions count in ([`notebooks`] publishes
/// an open notebook's on its cells).
fn diagnostics(file: &LintedFile) -> Vec<Diagnostic> {
    let Some(uri) = uri_of(&file.unit.path).filter(|_| file.cells.is_none()) else {
        return Vec::new();
    };
    let locate = |offset| Some((uri.clone(), position(file, offset)));
    (file.diagnostics.iter())
        .filter_map(|found| diagnostic(found, &locate))
        .map(|(_, diagnostic)| diagnostic)
        .collect()
}

/// One diagnostic in LSP's terms, in the document `locate` places its start in: positions in
/// UTF-16 code units, the rule as the code with a link to its documentation, the help after the
/// message, and the related places that `locate` places in the same document.
fn diagnostic(
    found: &project::Diagnostic,
    locate: &dyn Fn(usize) -> Option<(Uri, Position)>,
) -> Option<(Uri, Diagnostic)> {
    let finding = &found.finding;
    let (uri, start) = locate(finding.span.start)?;
    let range = |span: &std::ops::Range<usize>, start: Position| {
        let end = locate(span.end)
            .filter(|(end_uri, _)| *end_uri == uri)
            .map_or(start, |(_, end)| end);
        Range { start, end }
    };
    let related = (finding.related.iter())
        .filter_map(|(span, label)| {
            let (related_uri, start) = locate(span.start)?;
            Some(lsp_types::DiagnosticRelatedInformation {
                location: lsp_types::Location {
                    range: range(span, start),
                    uri: related_uri,
                },
                message: label.clone(),
            })
        })
        .collect();
    let diagnostic = Diagnostic {
        range: range(&finding.span, start),
        severity: Some(match found.level {
            Level::Deny => DiagnosticSeverity::ERROR,
            _ => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(finding.rule.name.to_owned())),
        code_description: documentation(finding.rule).map(|href| CodeDescription { href }),
        source: Some("placement".to_owned()),
        message: format!("{}\nhelp: {}", finding.message, finding.help),
        related_information: Some(related),
        ..Diagnostic::default()
    };
    Some((uri, diagnostic))
}

/// Where byte `offset` is, in LSP's terms: a 0-based line, and UTF-16 code units into it.
fn position(file: &LintedFile, offset: usize) -> Position {
    let line = file.lines.line_of(offset);
    let start = file.lines.line_start(line).min(file.text.len());
    let before = file
        .text
        .get(start..offset.min(file.text.len()))
        .unwrap_or_default();
    Position {
        line: line as u32,
        character: before.encode_utf16().count() as u32,
    }
}

/// A rule's documentation, written once as a Markdown file for editors to open (the link of
/// its diagnostics); none if it cannot be written.
fn documentation(rule: &'static crate::diagnostic::Rule) -> Option<Uri> {
    let dir = std::env::temp_dir().join(format!("placement-{}-rules", env!("CARGO_PKG_VERSION")));
    let path = dir.join(format!("{}.md", rule.name));
    if !path.is_file() {
        std::fs::create_dir_all(&dir).ok()?;
        // Written whole under another name, then moved: a reader never sees half of it.
        let partial = dir.join(format!("{}.md.{}", rule.name, std::process::id()));
        std::fs::write(&partial, rules::explanation(rule)).ok()?;
        std::fs::rename(&partial, &path).ok()?;
    }
    uri_of(&path)
}

/// What a `file:` URI may hold as it is.
const PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

fn uri_of(path: &Path) -> Option<Uri> {
    let path = path.to_str()?;
    format!("file://{}", utf8_percent_encode(path, PATH))
        .parse()
        .ok()
}

fn path_of(uri: &Uri) -> Option<PathBuf> {
    let path = uri.as_str().strip_prefix("file://")?;
    let path = percent_decode_str(path).decode_utf8().ok()?;
    Some(PathBuf::from(path.as_ref()))
}

/// The server's log, on stderr: the client shows it in its output panel.
fn log(message: &str) {
    eprintln!("[placement] {message}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_uris_round_trip() {
        let path = Path::new("/tmp/a project/pkg #1/model.py");
        let uri = uri_of(path).unwrap();
        assert_eq!(uri.as_str(), "file:///tmp/a%20project/pkg%20%231/model.py");
        assert_eq!(path_of(&uri).unwrap(), path);
    }

    #[test]
    fn levels_come_from_initialization_options() {
        let options =
            serde_json::json!({"levels": {"implicit_device": "deny", "warnings": "deny"}});
        let options = initialization_options(Some(&options)).unwrap();
        assert_eq!(
            options.cli.levels,
            [("implicit_device".to_owned(), Level::Deny)]
        );
        assert_eq!(options.cli.warnings, Some(Level::Deny));
        let bad = serde_json::json!({"levels": {"no_such_rule": "deny"}});
        assert!(
            initialization_options(Some(&bad))
                .unwrap_err()
                .contains("no rule named")
        );
        let bad = serde_json::json!({"levels": {"implicit_device": "loud"}});
        assert!(
            initialization_options(Some(&bad))
                .unwrap_err()
                .contains("not a level")
        );
    }
}
