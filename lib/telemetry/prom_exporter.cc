#include "telemetry/prom_exporter.h"

#include <civetweb.h>

#include <cstring>
#include <mutex>

#include "metrics/metrics.h"

namespace rocesw {

namespace {
std::once_flag g_init;

void send(mg_connection *conn, int status, const char *ctype, const std::string &body,
          bool allow_header) {
    mg_response_header_start(conn, status);
    mg_response_header_add(conn, "Content-Type", ctype, -1);
    mg_response_header_add(conn, "Content-Length", std::to_string(body.size()).c_str(), -1);
    mg_response_header_add(conn, "Cache-Control", "no-store", -1);
    if (allow_header) mg_response_header_add(conn, "Allow", "GET", -1);
    mg_response_header_send(conn);
    if (!body.empty()) mg_write(conn, body.data(), body.size());
}
}  // namespace

PromExporter::~PromExporter() {
    stop();
}

bool PromExporter::start(const std::string &listen, std::string *err) {
    stop();
    std::call_once(g_init, [] { mg_init_library(0); });
    // No document_root: civetweb serves no files, only the handler below. Four request
    // threads: each keep-alive scraper holds one between scrapes, and they sleep otherwise.
    const char *options[] = {"listening_ports",
                             listen.c_str(),
                             "num_threads",
                             "4",
                             "request_timeout_ms",
                             "10000",
                             "enable_keep_alive",
                             "yes",
                             "keep_alive_timeout_ms",
                             "15000",
                             nullptr};
    mg_callbacks cb;
    std::memset(&cb, 0, sizeof cb);
    // Keep civetweb's own error log quiet; failures come back through mg_start2's error text.
    cb.log_message = [](const mg_connection *, const char *) { return 1; };
    mg_init_data init{};
    init.callbacks = &cb;
    init.user_data = this;
    init.configuration_options = options;
    char text[256] = "";
    unsigned code = 0;
    mg_error_data e{};
    e.code = &code;
    e.text = text;
    e.text_buffer_size = sizeof text;
    ctx_ = mg_start2(&init, &e);
    if (!ctx_) {
        *err = "cannot serve metrics on " + listen + ": " + (text[0] ? text : "civetweb failed");
        return false;
    }
    mg_set_request_handler(ctx_, "/", &PromExporter::handle, this);
    mg_server_port ports[4];
    std::memset(ports, 0, sizeof ports);
    int n = mg_get_server_ports(ctx_, 4, ports);
    port_ = n > 0 ? ports[0].port : 0;
    return true;
}

void PromExporter::stop() {
    if (ctx_) mg_stop(ctx_);
    ctx_ = nullptr;
}

int PromExporter::handle(mg_connection *conn, void *self) {
    return static_cast<PromExporter *>(self)->handle(conn);
}

int PromExporter::handle(mg_connection *conn) {
    const mg_request_info *ri = mg_get_request_info(conn);
    const char *method = ri && ri->request_method ? ri->request_method : "";
    const std::string uri = ri && ri->local_uri ? ri->local_uri : "";
    if (std::strcmp(method, "GET") != 0) {
        refused_.fetch_add(1, std::memory_order_relaxed);
        send(conn, 405, "text/plain; charset=utf-8",
             "method not allowed: the endpoint is read-only\n", true);
        return 405;
    }
    if (uri == "/metrics" || uri == "/metrics/") {
        std::string body = registry_.render();
        scrapes_.fetch_add(1, std::memory_order_relaxed);
        send(conn, 200, "text/plain; version=0.0.4; charset=utf-8", body, false);
        return 200;
    }
    if (uri == "/") {
        send(conn, 200, "text/plain; charset=utf-8", "rocesw: metrics at /metrics\n", false);
        return 200;
    }
    send(conn, 404, "text/plain; charset=utf-8", "not found: try /metrics\n", false);
    return 404;
}

}  // namespace rocesw
