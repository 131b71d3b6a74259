#include "config/yaml_doc.h"

#include <yaml-cpp/eventhandler.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/config.h"

namespace rocesw {

namespace {

// Counts documents and keeps nothing.
struct NullHandler : YAML::EventHandler {
    void OnDocumentStart(const YAML::Mark &) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark &, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark &, YAML::anchor_t) override {}
    void OnScalar(const YAML::Mark &, const std::string &, YAML::anchor_t,
                  const std::string &) override {}
    void OnSequenceStart(const YAML::Mark &, const std::string &, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {}
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark &, const std::string &, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {}
    void OnMapEnd() override {}
};

}  // namespace

YAML::Node load_yaml_document(const std::string &text, const std::string &source) {
    try {
        NullHandler counter;
        std::istringstream in(text);
        YAML::Parser parser(in);
        size_t n_docs = 0;
        while (n_docs < 2 && parser.HandleNextDocument(counter)) n_docs++;
        if (n_docs > 1) throw ConfigError(source + ": expected one YAML document, found 2 or more");
        return n_docs == 1 ? YAML::Load(text) : YAML::Node();
    } catch (const YAML::ParserException &e) {
        if (e.mark.is_null()) throw ConfigError(source + ": " + e.msg);
        throw ConfigError(source + ": line " + std::to_string(e.mark.line + 1) + ", column " +
                          std::to_string(e.mark.column + 1) + ": " + e.msg);
    } catch (const YAML::Exception &e) {
        throw ConfigError(source + ": " + e.msg);
    }
}

std::string describe(const YAML::Node &n) {
    switch (n.Type()) {
        case YAML::NodeType::Scalar:
            return "'" + n.Scalar() + "'";
        case YAML::NodeType::Sequence:
            return "a list";
        case YAML::NodeType::Map:
            return "a map";
        default:
            return "an empty value";
    }
}

std::string read_config_file(const std::string &path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw ConfigError(path + ": is a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ConfigError(path + ": cannot open file");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad() || text.bad()) throw ConfigError(path + ": cannot read file");
    return text.str();
}

}  // namespace rocesw
