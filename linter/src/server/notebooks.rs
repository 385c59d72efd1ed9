//! Notebooks open in an editor, as LSP 3.17's notebook documents: each cell is a text document
//! of its own. The cells are put back together as the notebook's nbformat 4 JSON, linted as a
//! notebook file is ([`crate::notebook`]), and each finding is published on its cell.

use std::collections::HashMap;
use std::path::PathBuf;

use lsp_types::{
    Diagnostic, NotebookCell, NotebookCellKind, NotebookDocumentChangeEvent, Position,
    TextDocumentItem, Uri,
};

use crate::project::LintedFile;

/// A notebook open in the editor: its file, and its cells in order.
#[derive(Debug)]
pub(super) struct OpenNotebook {
    pub(super) path: PathBuf,
    pub(super) cells: Vec<NotebookCell>,
}

impl OpenNotebook {
    /// The notebook as nbformat 4 JSON, with `texts` as its cells' texts (a cell whose text the
    /// client did not send, a markdown cell, is empty).
    pub(super) fn json(&self, texts: &HashMap<Uri, String>) -> String {
        let cells: Vec<serde_json::Value> = (self.cells.iter())
            .map(|cell| {
                let kind = match cell.kind {
                    NotebookCellKind::Code => "code",
                    NotebookCellKind::Markup => "markdown",
                };
                let text = texts.get(&cell.document).map_or("", String::as_str);
                serde_json::json!({"cell_type": kind, "source": text})
            })
            .collect();
        serde_json::json!({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells})
            .to_string()
    }

    /// Applies a change of the notebook: its cells moved, added or removed (their texts opened
    /// and closed in `texts`), their kinds, and their texts (whole, as the server syncs them).
    pub(super) fn apply(
        &mut self,
        change: NotebookDocumentChangeEvent,
        texts: &mut HashMap<Uri, String>,
    ) {
        let Some(cells) = change.cells else { return };
        if let Some(structure) = cells.structure {
            let start = (structure.array.start as usize).min(self.cells.len());
            let end = (start + structure.array.delete_count as usize).min(self.cells.len());
            self.cells
                .splice(start..end, structure.array.cells.unwrap_or_default());
            for closed in structure.did_close.unwrap_or_default() {
                texts.remove(&closed.uri);
            }
            open_texts(texts, structure.did_open.unwrap_or_default());
        }
        for changed in cells.data.unwrap_or_default() {
            if let Some(cell) =
                (self.cells.iter_mut()).find(|cell| cell.document == changed.document)
            {
                *cell = changed;
            }
        }
        for content in cells.text_content.unwrap_or_default() {
            if let Some(change) = content.changes.into_iter().last() {
                texts.insert(content.document.uri, change.text);
            }
        }
    }
}

/// Keeps the texts of cells the client opened.
pub(super) fn open_texts(texts: &mut HashMap<Uri, String>, opened: Vec<TextDocumentItem>) {
    for cell in opened {
        texts.insert(cell.uri, cell.text);
    }
}

/// The diagnostics of a notebook linted from [`OpenNotebook::json`], on the cells they are in:
/// every cell has its list, an empty one clearing what it showed.
pub(super) fn by_cell(file: &LintedFile, cells: &[NotebookCell]) -> Vec<(Uri, Vec<Diagnostic>)> {
    let mut found: Vec<(Uri, Vec<Diagnostic>)> = (cells.iter())
        .map(|cell| (cell.document.clone(), Vec::new()))
        .collect();
    // A place of the joined code: the cell's 1-based number is its place among all cells.
    let locate = |offset: usize| {
        let place = file.place(offset);
        let cell = cells.get(place.cell?.checked_sub(1)?)?;
        let character = super::position(file, offset).character;
        let line = place.line.checked_sub(1)? as u32;
        Some((cell.document.clone(), Position { line, character }))
    };
    for diagnostic in &file.diagnostics {
        if let Some((uri, diagnostic)) = super::diagnostic(diagnostic, &locate)
            && let Some((_, list)) = found.iter_mut().find(|(cell, _)| *cell == uri)
        {
            list.push(diagnostic);
        }
    }
    found
}
