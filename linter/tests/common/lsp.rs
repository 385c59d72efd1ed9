//! A language-server client over stdio, as an editor is one: it starts `placement server`,
//! writes JSON-RPC messages with their `Content-Length` headers, and reads the server's on a
//! thread of its own. The server tests and the latency bench drive the server with it.

#![allow(dead_code, unreachable_pub)] // each user takes the part it needs

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    /// Messages read while waiting for another, in order.
    skipped: Vec<Value>,
    next_id: u64,
}

impl Client {
    /// Starts `binary server` in `root`, and initializes it with `options` as the
    /// `initializationOptions`.
    pub fn start(binary: &Path, root: &Path, options: Value) -> Client {
        let mut client = Client::spawn(binary, root);
        let response = client.initialize(root, options);
        let result = &response["result"];
        assert!(
            result["capabilities"]["codeActionProvider"] == true,
            "{response}"
        );
        client.notify("initialized", json!({}));
        client
    }

    /// Starts `binary server` in `root`, not yet initialized.
    pub fn spawn(binary: &Path, root: &Path) -> Client {
        let mut child = Command::new(binary)
            .arg("server")
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_message(&mut reader) {
                if sender.send(message).is_err() {
                    return;
                }
            }
        });
        Client {
            child,
            stdin,
            messages,
            skipped: Vec::new(),
            next_id: 0,
        }
    }

    /// Sends `initialize` for the workspace `root`: the whole response.
    pub fn initialize(&mut self, root: &Path, options: Value) -> Value {
        let root_uri = uri(root);
        let params = json!({
            "processId": null,
            "rootUri": root_uri,
            "workspaceFolders": [{"uri": root_uri, "name": "root"}],
            "capabilities": {},
            "initializationOptions": options,
        });
        self.respond("initialize", params)
    }

    /// Sends a request and waits for its whole response.
    pub fn respond(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.wait(|message| message["id"] == id && message.get("method").is_none())
    }

    /// Waits for the server to end: its exit status.
    pub fn exit_code(mut self) -> Option<i32> {
        self.child.wait().expect("the server exits").code()
    }

    /// Sends a request and waits for its response's result.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let response = self.respond(method, params);
        assert!(response.get("error").is_none(), "{response}");
        response["result"].clone()
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Opens a text document: `textDocument/didOpen`.
    pub fn open(&mut self, uri: &str, language: &str, text: &str) {
        let document = json!({"uri": uri, "languageId": language, "version": 0, "text": text});
        self.notify("textDocument/didOpen", json!({"textDocument": document}));
    }

    /// Replaces a document's text: `textDocument/didChange`, with the whole text.
    pub fn change(&mut self, uri: &str, version: usize, text: &str) {
        let document = json!({"uri": uri, "version": version});
        let changes = json!([{"text": text}]);
        let params = json!({"textDocument": document, "contentChanges": changes});
        self.notify("textDocument/didChange", params);
    }

    /// The next message from the server that `wanted` accepts; the others are kept for later
    /// waits.
    pub fn wait(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(at) = self.skipped.iter().position(&wanted) {
            return self.skipped.remove(at);
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(message) if wanted(&message) => return message,
                Ok(message) => self.skipped.push(message),
                Err(RecvTimeoutError::Timeout) => panic!("no such message from the server"),
                Err(RecvTimeoutError::Disconnected) => panic!("the server stopped"),
            }
        }
    }

    /// The next diagnostics the server publishes for `uri`.
    pub fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        let message = self.wait(|message| {
            message["method"] == "textDocument/publishDiagnostics"
                && message["params"]["uri"] == uri
        });
        message["params"]["diagnostics"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// Asks the server to shut down and exit; its exit status.
    pub fn shut_down(mut self) -> Option<i32> {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        self.exit_code()
    }

    fn send(&mut self, message: &Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write");
        self.stdin.flush().expect("flush");
    }
}

/// A `file:` URI of a path, as editors write them.
pub fn uri(path: &Path) -> String {
    let path = path.to_str().expect("a UTF-8 path");
    format!("file://{}", path.replace('%', "%25").replace(' ', "%20"))
}

fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length: ") {
            length = value.parse().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}
