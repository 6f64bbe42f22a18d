//! `notebook_edit`, the opt-in extra [`Extra::NotebookEdit`](super::Extra): replace, insert
//! or delete one cell of a Jupyter notebook (`.ipynb`), picked by its id or its 0-based
//! index. Name, schema and wording are the upstream crate's.
//!
//! The notebook stays valid nbformat: a replaced code cell loses its outputs and execution
//! count (they belonged to the old source), a markdown cell carries neither, an inserted cell
//! gets an id when the notebook's format (4.5 and later) requires one, and the file is written
//! as Jupyter writes it (one-space indent, keys of new cells sorted, a final newline) through a
//! temporary file renamed over the old one. The path is resolved, and confined, like every
//! other file tool's; the result says what changed (`files`, `diff`).

use std::hash::{BuildHasher as _, Hasher as _};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize as _;
use serde_json::{Map, Value, json};

use super::args::Args;
use super::diffmeta::{self, ChangeKind, FileChange};
use super::files::{io_error, read_text, write_atomic};
use super::workspace::{Workspace, real_path};
use super::{blocking, builtin, input_schema};
use crate::result::ToolResult;
use crate::tool::Tool;

/// `notebook_edit`'s arguments.
#[derive(JsonSchema)]
struct NotebookArgs {
    /// Path to the .ipynb file
    path: String,
    /// The cell's id (or use cell_index)
    cell_id: Option<String>,
    /// 0-based cell position (used when cell_id is absent)
    #[schemars(with = "Option<f64>")]
    cell_index: Option<usize>,
    /// The new cell source (replace/insert)
    new_source: Option<String>,
    /// Cell type for insert (default code) or to change on replace
    cell_type: Option<CellType>,
    /// Default replace. insert adds the new cell AFTER the given cell, or first when none is given
    edit_mode: Option<EditMode>,
}

/// The kinds of cell a model may write.
#[derive(Clone, Copy, PartialEq, Eq, JsonSchema)]
#[schemars(rename_all = "lowercase")]
enum CellType {
    Code,
    Markdown,
}

/// What to do to the cell.
#[derive(Clone, Copy, PartialEq, Eq, JsonSchema)]
#[schemars(rename_all = "lowercase")]
enum EditMode {
    Replace,
    Insert,
    Delete,
}

impl CellType {
    fn as_str(self) -> &'static str {
        match self {
            CellType::Code => "code",
            CellType::Markdown => "markdown",
        }
    }
}

impl EditMode {
    fn as_str(self) -> &'static str {
        match self {
            EditMode::Replace => "replace",
            EditMode::Insert => "insert",
            EditMode::Delete => "delete",
        }
    }
}

/// `args[key]` as one of `all` (by its `as_str`), or the error naming the choices.
fn choice<T: Copy>(
    a: &Args<'_>,
    key: &str,
    all: &[T],
    name: fn(T) -> &'static str,
) -> Result<Option<T>, String> {
    let Some(given) = a.opt_str(key)? else {
        return Ok(None);
    };
    all.iter()
        .copied()
        .find(|c| name(*c) == given)
        .map(Some)
        .ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|c| name(*c)).collect();
            format!(
                "notebook_edit: {key} must be one of {}, got {given:?}",
                names.join(", ")
            )
        })
}

impl NotebookArgs {
    fn parse(args: &Value) -> Result<Self, String> {
        let a = Args::new("notebook_edit", args)?;
        let cell_index = match a.opt_num("cell_index")? {
            None => None,
            Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= usize::MAX as f64 => Some(n as usize),
            Some(n) => {
                return Err(format!(
                    "notebook_edit: cell_index must be a whole number from 0, got {n}"
                ));
            }
        };
        let cell_type = choice(
            &a,
            "cell_type",
            &[CellType::Code, CellType::Markdown],
            CellType::as_str,
        )?;
        let modes = [EditMode::Replace, EditMode::Insert, EditMode::Delete];
        Ok(Self {
            path: a.str("path")?.to_owned(),
            cell_id: a.opt_str("cell_id")?.map(str::to_owned),
            cell_index,
            new_source: a.opt_str_or_empty("new_source")?.map(str::to_owned),
            cell_type,
            edit_mode: choice(&a, "edit_mode", &modes, EditMode::as_str)?,
        })
    }
}

pub(super) fn tool(ws: Arc<Workspace>) -> Tool {
    builtin(
        "notebook_edit",
        "Edit a Jupyter notebook (.ipynb) cell: replace its source, insert a new cell after it, or delete it. Replacing a code cell clears its outputs.",
        input_schema::<NotebookArgs>(),
        move |args, _| run(ws.clone(), args),
    )
}

async fn run(ws: Arc<Workspace>, args: Value) -> Result<ToolResult, String> {
    let args = NotebookArgs::parse(&args)?;
    blocking("notebook_edit", move || {
        let shown = args.path.as_str();
        let path = ws.resolve("notebook_edit", shown)?;
        let before = read_text("notebook_edit", &path, shown)?;
        let not_a_notebook =
            |why: &dyn std::fmt::Display| format!("notebook_edit: {shown} is not a notebook: {why}");
        let mut notebook: Map<String, Value> = match serde_json::from_str(&before) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(not_a_notebook(&"not a JSON object")),
            Err(e) => return Err(not_a_notebook(&e)),
        };
        let wants_ids = needs_cell_ids(&notebook);
        let Some(Value::Array(cells)) = notebook.get_mut("cells") else {
            return Err(not_a_notebook(&"it has no cells array"));
        };
        let summary = edit(cells, &args, wants_ids)?;
        let count = cells.len();
        let after = to_ipynb(&Value::Object(notebook));
        let target = real_path(&path).unwrap_or(path);
        write_atomic(&target, after.as_bytes()).map_err(|e| io_error("notebook_edit", shown, &e))?;
        let result = ToolResult::success(format!("{summary} {shown}")).with_meta("cells", count);
        let change = FileChange {
            path: shown,
            kind: ChangeKind::Modified,
            before: &before,
            after: &after,
        };
        Ok(diffmeta::attach(result, &[change]))
    })
    .await
}

/// Apply the edit to `cells`; returns the result's words up to the path.
fn edit(cells: &mut Vec<Value>, args: &NotebookArgs, wants_ids: bool) -> Result<String, String> {
    let mode = args.edit_mode.unwrap_or(EditMode::Replace);
    let index = match (&args.cell_id, args.cell_index) {
        (Some(id), _) => Some(
            cells
                .iter()
                .position(|c| c.get("id").and_then(Value::as_str) == Some(id))
                .ok_or_else(|| format!("notebook_edit: no cell with id {id:?}"))?,
        ),
        (None, Some(i)) if i < cells.len() => Some(i),
        (None, Some(i)) => {
            return Err(format!(
                "notebook_edit: cell_index {i} is out of range: the notebook has {} cells",
                cells.len()
            ));
        }
        (None, None) => None,
    };
    let source = || {
        args.new_source.as_deref().ok_or_else(|| {
            format!(
                "notebook_edit: new_source is required to {} a cell",
                mode.as_str()
            )
        })
    };
    Ok(match (mode, index) {
        (EditMode::Replace, Some(i)) => {
            let Some(cell) = cells[i].as_object_mut() else {
                return Err(format!("notebook_edit: cell {i} is not a JSON object"));
            };
            cell.insert("source".into(), source_lines(source()?));
            if let Some(kind) = args.cell_type {
                cell.insert("cell_type".into(), json!(kind.as_str()));
            }
            if cell.get("cell_type").and_then(Value::as_str) == Some("code") {
                cell.insert("outputs".into(), json!([]));
                cell.insert("execution_count".into(), Value::Null);
            } else {
                cell.remove("outputs");
                cell.remove("execution_count");
            }
            format!("Replaced cell {i} in")
        }
        (EditMode::Insert, at) => {
            let kind = args.cell_type.unwrap_or(CellType::Code);
            let at = at.map_or(0, |i| i + 1);
            let id = wants_ids.then(|| fresh_id(cells));
            cells.insert(at, new_cell(kind, id, source()?));
            format!("Inserted {} cell at {at} in", kind.as_str())
        }
        (EditMode::Delete, Some(i)) => {
            cells.remove(i);
            format!("Deleted cell {i} from")
        }
        (EditMode::Replace | EditMode::Delete, None) => {
            return Err("notebook_edit: cell_id or cell_index is required".into());
        }
    })
}

/// nbformat 4.5 and later require every cell to have an id.
fn needs_cell_ids(notebook: &Map<String, Value>) -> bool {
    let int = |k: &str| notebook.get(k).and_then(Value::as_u64).unwrap_or(0);
    (int("nbformat"), int("nbformat_minor")) >= (4, 5)
}

/// An id no cell has: 8 hex digits, as Jupyter makes them.
fn fresh_id(cells: &[Value]) -> String {
    let taken = |id: &str| {
        cells
            .iter()
            .any(|c| c.get("id").and_then(Value::as_str) == Some(id))
    };
    loop {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_usize(cells.len());
        let id = format!("{:08x}", hasher.finish() as u32);
        if !taken(&id) {
            return id;
        }
    }
}

/// A new cell, keys in the order Jupyter writes them (sorted).
fn new_cell(kind: CellType, id: Option<String>, source: &str) -> Value {
    let mut cell = Map::new();
    cell.insert("cell_type".into(), json!(kind.as_str()));
    if kind == CellType::Code {
        cell.insert("execution_count".into(), Value::Null);
    }
    if let Some(id) = id {
        cell.insert("id".into(), json!(id));
    }
    cell.insert("metadata".into(), json!({}));
    if kind == CellType::Code {
        cell.insert("outputs".into(), json!([]));
    }
    cell.insert("source".into(), source_lines(source));
    Value::Object(cell)
}

/// A cell source as nbformat stores it: its lines, each keeping its newline.
fn source_lines(source: &str) -> Value {
    source.split_inclusive('\n').map(|l| json!(l)).collect()
}

/// The notebook as Jupyter writes it: one-space indent and a final newline.
fn to_ipynb(notebook: &Value) -> String {
    let mut out = Vec::new();
    let mut ser =
        serde_json::Serializer::with_formatter(&mut out, serde_json::ser::PrettyFormatter::with_indent(b" "));
    notebook
        .serialize(&mut ser)
        .expect("a JSON value always serializes");
    out.push(b'\n');
    String::from_utf8(out).expect("serde_json writes UTF-8")
}
