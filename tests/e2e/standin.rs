//! A loopback stand-in for the Anthropic Messages API, std only.
//!
//! The real Claude Code CLI is pointed at it with `ANTHROPIC_BASE_URL`. Every
//! request is recorded; `POST /v1/messages` is answered by a test-supplied
//! script (a closure that looks at the request and returns a [`Reply`]), as
//! server-sent events when the request asks for `"stream": true` and as one
//! JSON message otherwise. Everything else the CLI may call (`HEAD /api/hello`,
//! `count_tokens`, `/v1/models`, …) gets a harmless 200.
//!
//! One request per connection (`Connection: close`): simpler than keep-alive,
//! and the CLI's HTTP client copes with it.

#![allow(dead_code)] // not every test uses every helper

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// What the stand-in answers to one `POST /v1/messages`.
#[derive(Clone, Debug)]
pub enum Reply {
    /// One text block, `stop_reason: end_turn`.
    Text(String),
    /// One tool call, `stop_reason: tool_use`; the CLI runs the tool (if
    /// permitted) and sends the `tool_result` in its next request.
    ToolUse { name: String, input: Value },
    /// Answer after a pause, e.g. to press Esc during a slow reply.
    Delayed(Duration, Box<Reply>),
    /// An HTTP error with the API's error body. Note the CLI retries 429/5xx
    /// with backoff; a 400 fails at once.
    Error(u16, String),
    /// Answer as the inner reply does, but report the request as a prompt
    /// cache miss: nothing read from the cache, all of it written.
    Missed(Box<Reply>),
    /// Any HTTP status with extra response headers (e.g. the
    /// `anthropic-ratelimit-unified-*` set of a used-up plan) and a JSON
    /// body sent as is (e.g. `{"type":"error","error":{…}}`).
    Refused { status: u16, headers: Vec<(String, String)>, body: Value },
    /// Answer as the inner reply does, with these extra response headers
    /// on its 200 (e.g. a plan's `anthropic-ratelimit-unified-5h-*`).
    WithHeaders(Vec<(String, String)>, Box<Reply>),
}

impl Reply {
    pub fn text(s: impl Into<String>) -> Reply {
        Reply::Text(s.into())
    }
    pub fn bash(command: &str) -> Reply {
        Reply::ToolUse {
            name: "Bash".into(),
            input: json!({ "command": command, "description": "scripted by the stand-in" }),
        }
    }
    pub fn with_headers(self, headers: &[(&str, String)]) -> Reply {
        Reply::WithHeaders(headers.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(), Box::new(self))
    }
    pub fn after(self, delay: Duration) -> Reply {
        Reply::Delayed(delay, Box::new(self))
    }
    /// `status` with `headers` and the API's error body of `error_type`.
    pub fn refused(status: u16, headers: &[(&str, String)], error_type: &str, message: &str) -> Reply {
        Reply::Refused {
            status,
            headers: headers.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
            body: json!({ "type": "error", "error": { "type": error_type, "message": message } }),
        }
    }
}

/// Token figures reported back for one request (see `usage_for`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub cache_creation_input_tokens: u64,
}

impl Usage {
    /// Share of the request that the (fake) prompt cache served.
    pub fn cached_share(&self) -> f64 {
        let total = self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens;
        if total == 0 { 0.0 } else { self.cache_read_input_tokens as f64 / total as f64 }
    }
    fn to_json(self) -> Value {
        json!({
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
        })
    }
}

/// One request as the stand-in received it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    pub method: String,
    /// Path with query, e.g. `/v1/messages?beta=true`.
    pub path: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    /// Parsed JSON body; `Value::Null` when empty or not JSON.
    pub body: Value,
    /// For messages requests: the usage we reported back.
    pub usage: Option<Usage>,
    /// When the stand-in had read it.
    pub at: Instant,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(k, _)| *k == name).map(|(_, v)| v.as_str())
    }

    /// A model turn: `POST /v1/messages` (with or without `?beta=true`), not
    /// `/v1/messages/count_tokens`.
    pub fn is_messages(&self) -> bool {
        let path = self.path.split('?').next().unwrap_or("");
        self.method == "POST" && path == "/v1/messages"
    }

    pub fn model(&self) -> &str {
        self.body["model"].as_str().unwrap_or("")
    }

    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .map(|ts| ts.iter().filter_map(|t| t["name"].as_str().map(String::from)).collect())
            .unwrap_or_default()
    }

    pub fn messages(&self) -> &[Value] {
        self.body["messages"].as_array().map(Vec::as_slice).unwrap_or(&[])
    }

    /// The last message with `role: user`. Not simply the last message:
    /// Claude Code 2.1.328 puts a `role: system` message (environment, hook
    /// context) into `messages`, and on the first request it comes last.
    pub fn last_user_message(&self) -> Option<&Value> {
        self.messages().iter().rev().find(|m| m["role"] == "user")
    }

    /// The session-title side request (interactive mode, only when
    /// non-essential traffic is allowed): no tools, one `<session>…</session>`
    /// user message, and a JSON-schema output format with a `title` field.
    /// Answer it with `{"title":"…"}`.
    pub fn is_title_request(&self) -> bool {
        self.body["output_config"]["format"]["schema"]["properties"]["title"].is_object()
    }

    /// All text of the first user message: the prompt that opened this
    /// context (a subagent's own requests start with its task prompt).
    pub fn first_user_text(&self) -> String {
        self.messages().iter().find(|m| m["role"] == "user").map(content_text).unwrap_or_default()
    }

    /// All text of the last user message: text blocks and tool_result content.
    pub fn last_user_text(&self) -> String {
        self.last_user_message().map(content_text).unwrap_or_default()
    }

    /// True when the last user message carries a tool_result (the CLI is
    /// reporting back a tool call we scripted).
    pub fn has_tool_result(&self) -> bool {
        self.last_user_message()
            .and_then(|m| m["content"].as_array())
            .is_some_and(|bs| bs.iter().any(|b| b["type"] == "tool_result"))
    }

    /// How many tool_result blocks the request's messages carry: the tool
    /// calls the CLI has made in this context so far.
    pub fn tool_result_count(&self) -> usize {
        let blocks = self.messages().iter().filter_map(|m| m["content"].as_array()).flatten().cloned();
        blocks.filter(|b| b["type"] == "tool_result").count()
    }

    /// Every text in the request's messages (any role), joined: to find a
    /// hook's additionalContext, which arrives inside the `system` message.
    pub fn all_message_text(&self) -> String {
        self.messages().iter().map(content_text).collect::<Vec<_>>().join("\n")
    }
}

/// Text of one message: a plain string content, or its text blocks and
/// tool_result contents.
fn content_text(message: &Value) -> String {
    fn block_text(b: &Value) -> String {
        match &b["content"] {
            Value::String(s) => s.clone(),
            Value::Array(inner) => inner.iter().map(block_text).collect::<Vec<_>>().join("\n"),
            _ => b["text"].as_str().unwrap_or("").to_string(),
        }
    }
    match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().map(block_text).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

pub type Script = dyn Fn(&RecordedRequest) -> Reply + Send + Sync;

struct Shared {
    script: Box<Script>,
    requests: Mutex<Vec<RecordedRequest>>,
    stop: AtomicBool,
    counter: AtomicU64,
}

pub struct StandIn {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept_thread: Option<JoinHandle<()>>,
}

impl StandIn {
    /// Bind 127.0.0.1 on a free port and serve in background threads.
    pub fn start(script: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static) -> StandIn {
        let listener = TcpListener::bind("127.0.0.1:0").expect("stand-in: bind 127.0.0.1:0");
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            script: Box::new(script),
            requests: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            counter: AtomicU64::new(0),
        });
        let s = shared.clone();
        let accept_thread = thread::spawn(move || {
            for conn in listener.incoming() {
                if s.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let s = s.clone();
                // Detached: a delayed reply must not hold up other requests,
                // and a connection the CLI dropped (Esc) just ends.
                thread::spawn(move || {
                    let _ = serve(conn, &s);
                });
            }
        });
        StandIn { addr, shared, accept_thread: Some(accept_thread) }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Everything received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests.lock().unwrap().clone()
    }

    /// Only the model turns (`POST /v1/messages`).
    pub fn message_requests(&self) -> Vec<RecordedRequest> {
        self.requests().into_iter().filter(|r| r.is_messages()).collect()
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept() so the thread sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.accept_thread.take() {
            let _ = t.join();
        }
    }
}

/// Read one HTTP/1.1 request, record it, answer it, close.
fn serve(conn: TcpStream, shared: &Shared) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let (Some(method), Some(path)) = (parts.next(), parts.next()) else {
        return Ok(()); // the wake-up connect from Drop, or garbage
    };
    let (method, path) = (method.to_string(), path.to_string());

    let mut headers = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            break;
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let header = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    // The CLI sends Content-Length; chunked uploads are not expected.
    let len: usize = header("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
    let mut raw = vec![0; len];
    reader.read_exact(&mut raw)?;
    let body: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);

    let mut req = RecordedRequest { method, path, headers, body, usage: None, at: Instant::now() };
    let mut out = conn;

    if !req.is_messages() {
        let answer = if req.path.starts_with("/v1/messages/count_tokens") {
            json!({ "input_tokens": approx_tokens(&prompt_text(&req.body)) })
        } else if req.path.starts_with("/v1/models") {
            json!({ "data": [], "has_more": false, "first_id": null, "last_id": null })
        } else {
            json!({}) // HEAD /api/hello (connectivity check) and anything else
        };
        record(shared, req.clone());
        return respond_json(&mut out, &req.method, 200, &answer);
    }

    // Usage first (needs the earlier requests), then record, then ask the
    // script, so a test that inspects requests() mid-reply sees this one.
    let mut usage = usage_for(shared, &req);
    // Recorded before the script runs: a script may wait for other requests
    // (and a test for this one) before it answers.
    req.usage = Some(usage);
    record(shared, req.clone());
    let mut reply = (shared.script)(&req);
    let mut extra: Vec<(String, String)> = Vec::new();
    loop {
        match reply {
            Reply::Delayed(d, inner) => {
                // Sleep in slices so dropping the stand-in does not wait for it.
                let end = Instant::now() + d;
                while Instant::now() < end && !shared.stop.load(Ordering::SeqCst) {
                    thread::sleep(Duration::from_millis(50));
                }
                reply = *inner;
            }
            Reply::Missed(inner) => {
                usage.cache_creation_input_tokens += usage.cache_read_input_tokens;
                usage.cache_read_input_tokens = 0;
                restate_usage(shared, &req, usage);
                reply = *inner;
            }
            Reply::WithHeaders(headers, inner) => {
                extra.extend(headers);
                reply = *inner;
            }
            other => {
                reply = other;
                break;
            }
        }
    }
    if let Reply::Error(status, message) = &reply {
        let err = json!({ "type": "error", "error": { "type": "api_error", "message": message } });
        return respond_json(&mut out, "POST", *status, &err);
    }
    if let Reply::Refused { status, headers, body } = &reply {
        return respond_with(&mut out, *status, headers, body);
    }

    let n = shared.counter.fetch_add(1, Ordering::SeqCst) + 1;
    // Unique ids matter: the CLI merges transcript entries that share a
    // message id, which would reorder blocks when a session is resumed.
    let message_id = format!("msg_standin_{n:06}");
    let (block, stop_reason) = match &reply {
        Reply::Text(t) => (json!({ "type": "text", "text": t }), "end_turn"),
        Reply::ToolUse { name, input } => (
            json!({ "type": "tool_use", "id": format!("toolu_standin_{n:06}"), "name": name, "input": input }),
            "tool_use",
        ),
        Reply::Delayed(..) | Reply::Error(..) | Reply::Missed(..) | Reply::Refused { .. } | Reply::WithHeaders(..) => {
            unreachable!()
        }
    };
    let model = req.model().to_string();
    let message = json!({
        "id": message_id, "type": "message", "role": "assistant", "model": model,
        "content": [block], "stop_reason": stop_reason, "stop_sequence": null,
        "usage": usage.to_json(),
    });

    if req.body["stream"] != true {
        return respond_json(&mut out, "POST", 200, &message);
    }

    let extra: String = extra.iter().map(|(k, v)| format!("{k}: {v}\r\n")).collect();
    write!(
        out,
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n{extra}connection: close\r\n\r\n"
    )?;
    let mut start = message.clone();
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    start["usage"]["output_tokens"] = json!(1);
    sse(&mut out, "message_start", &json!({ "type": "message_start", "message": start }))?;
    let (empty_block, delta) = match &reply {
        Reply::Text(t) => (json!({ "type": "text", "text": "" }), json!({ "type": "text_delta", "text": t })),
        Reply::ToolUse { .. } => {
            let mut b = block.clone();
            b["input"] = json!({});
            (b, json!({ "type": "input_json_delta", "partial_json": block["input"].to_string() }))
        }
        _ => unreachable!(),
    };
    sse(
        &mut out,
        "content_block_start",
        &json!({ "type": "content_block_start", "index": 0, "content_block": empty_block }),
    )?;
    sse(&mut out, "content_block_delta", &json!({ "type": "content_block_delta", "index": 0, "delta": delta }))?;
    sse(&mut out, "content_block_stop", &json!({ "type": "content_block_stop", "index": 0 }))?;
    sse(
        &mut out,
        "message_delta",
        &json!({ "type": "message_delta",
                 "delta": { "stop_reason": stop_reason, "stop_sequence": null },
                 "usage": usage.to_json() }),
    )?;
    sse(&mut out, "message_stop", &json!({ "type": "message_stop" }))?;
    out.flush()?;
    let _ = out.shutdown(Shutdown::Both);
    Ok(())
}

fn record(shared: &Shared, req: RecordedRequest) {
    shared.requests.lock().unwrap().push(req);
}

fn sse(out: &mut TcpStream, event: &str, data: &Value) -> std::io::Result<()> {
    write!(out, "event: {event}\ndata: {data}\n\n")?;
    out.flush()
}

fn respond_json(out: &mut TcpStream, method: &str, status: u16, body: &Value) -> std::io::Result<()> {
    let text = body.to_string();
    write!(
        out,
        "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        if status == 200 { "OK" } else { "Error" },
        text.len()
    )?;
    if method != "HEAD" {
        out.write_all(text.as_bytes())?;
    }
    out.flush()?;
    let _ = out.shutdown(Shutdown::Both);
    Ok(())
}

/// A JSON answer with any status and extra headers (`Reply::Refused`).
fn respond_with(out: &mut TcpStream, status: u16, headers: &[(String, String)], body: &Value) -> std::io::Result<()> {
    let text = body.to_string();
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        529 => "Overloaded",
        _ => "Error",
    };
    let mut head = format!("HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("content-length: {}\r\nconnection: close\r\n\r\n", text.len()));
    out.write_all(head.as_bytes())?;
    out.write_all(text.as_bytes())?;
    out.flush()?;
    let _ = out.shutdown(Shutdown::Both);
    Ok(())
}

/// What the prompt cache would see: tools, then system, then messages, in
/// the order the API caches them. Normalised so that differences which render
/// to the same tokens do not count: `cache_control` markers (they move to the
/// newest message on every request) and a message content sent as a plain
/// string versus one text block (the CLI sends its `system`-role message as
/// a block list on the first request and as a string afterwards).
pub fn prompt_text(body: &Value) -> String {
    format!("{}{}{}", normalise(&body["tools"]), normalise(&body["system"]), normalise(&body["messages"]))
}

/// `v` without `cache_control` markers, and with a plain-string `content`
/// turned into one text block: the same tokens either way.
pub fn normalise(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = serde_json::Map::new();
            for (k, val) in m {
                match (k.as_str(), val) {
                    ("cache_control", _) => {}
                    ("content", Value::String(s)) => {
                        out.insert(k.clone(), json!([{ "type": "text", "text": s }]));
                    }
                    _ => {
                        out.insert(k.clone(), normalise(val));
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(normalise).collect()),
        other => other.clone(),
    }
}

fn approx_tokens(s: &str) -> u64 {
    (s.len() as u64).div_ceil(4) // about four bytes per token: plausible, not exact
}

/// Replaces the usage recorded for `req` (the newest record equal to it).
fn restate_usage(shared: &Shared, req: &RecordedRequest, usage: Usage) {
    let mut requests = shared.requests.lock().unwrap();
    if let Some(recorded) = requests.iter_mut().rev().find(|r| r.at == req.at && r.path == req.path) {
        recorded.usage = Some(usage);
    }
}

/// Fake but plausible usage: the longest common prefix with any earlier
/// request for the same model counts as cache read (the real cache is per
/// model and serves any earlier prefix); the rest as cache creation, plus a
/// few uncached input tokens. Output is a fixed small number.
fn usage_for(shared: &Shared, req: &RecordedRequest) -> Usage {
    let text = prompt_text(&req.body);
    let earlier = shared.requests.lock().unwrap();
    let prefix = earlier
        .iter()
        .filter(|r| r.is_messages() && r.model() == req.model())
        .map(|r| common_prefix_len(&prompt_text(&r.body), &text))
        .max()
        .unwrap_or(0);
    Usage {
        input_tokens: 3,
        output_tokens: 12,
        cache_read_input_tokens: approx_tokens(&text[..prefix]),
        cache_creation_input_tokens: approx_tokens(&text[prefix..]),
    }
}

/// Length in bytes of the common prefix, at a char boundary of `b`.
pub fn common_prefix_len(a: &str, b: &str) -> usize {
    let mut n = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    while !b.is_char_boundary(n) {
        n -= 1;
    }
    n
}
