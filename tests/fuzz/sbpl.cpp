// Fuzz target: the Seatbelt profiles confine writes (plugins/seatbelt/sbpl.hpp), read
// back by a reader of SBPL's own here. Properties: a profile is made exactly when every
// path can be written as a string literal; it reads as whole forms, one per line, with
// no line break inside one; and each writable root, unreadable path and protected path
// reads back, byte for byte, in the rule that names it.
#include "fuzz.hpp"

#include "sbpl.hpp"

#include <algorithm>
#include <cstring>

using confine::fuzz::require;

namespace {

// SBPL as a Scheme reader sees it: lists, strings with backslash escapes, symbols, and
// comments from ';' to the end of the line.
struct Node {
    enum class Kind { list, string, symbol } kind;
    std::string text;  // a string's bytes, a symbol's name
    std::vector<Node> items;
};

struct Reader {
    std::string_view text;
    std::size_t at = 0;
    int depth = 0;

    void space() {
        while (at < text.size()) {
            const char c = text[at];
            if (c == ';') {
                while (at < text.size() && text[at] != '\n') ++at;
            } else if (c == ' ' || c == '\t' || c == '\n') {
                require(c != '\n' || depth == 0, "no line break inside a form", text.substr(0, at));
                ++at;
            } else {
                return;
            }
        }
    }
    Node node() {
        space();
        require(at < text.size(), "a form is whole", text);
        const char c = text[at];
        if (c == '(') {
            ++at;
            ++depth;
            Node list{Node::Kind::list, {}, {}};
            for (space(); at < text.size() && text[at] != ')'; space()) list.items.push_back(node());
            require(at < text.size(), "every list is closed", text);
            ++at;
            --depth;
            return list;
        }
        require(c != ')', "no list closes that was not opened", text);
        if (c == '"') {
            Node s{Node::Kind::string, {}, {}};
            for (++at; at < text.size() && text[at] != '"'; ++at) {
                if (text[at] == '\\') ++at;
                require(at < text.size(), "a string is closed", text);
                s.text += text[at];
            }
            require(at < text.size(), "a string is closed", text);
            ++at;
            return s;
        }
        Node sym{Node::Kind::symbol, {}, {}};
        while (at < text.size() && !std::strchr(" \t\n();\"", text[at])) sym.text += text[at++];
        return sym;
    }
};

bool is_rule(const Node& form, std::initializer_list<std::string_view> head, std::string_view filter, const std::string& path) {
    if (form.kind != Node::Kind::list || form.items.size() != head.size() + 1) return false;
    std::size_t i = 0;
    for (std::string_view word : head)
        if (form.items[i].kind != Node::Kind::symbol || form.items[i++].text != word) return false;
    const Node& f = form.items.back();
    return f.kind == Node::Kind::list && f.items.size() == 2 && f.items[0].text == filter && f.items[1].kind == Node::Kind::string &&
           f.items[1].text == path;
}

bool writable_as_literal(const std::string& p) {
    return std::none_of(p.begin(), p.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }) &&
           confine::seatbelt::valid_utf8(p);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    confine::fuzz::Input in(data, size);
    const std::uint8_t counts = in.byte();
    confine::seatbelt::Request r;
    r.network_none = counts & 0x40;
    for (int i = 0; i < (counts & 3); ++i) r.roots.emplace_back(in.until('\xff'));
    for (int i = 0; i < ((counts >> 2) & 3); ++i) r.deny_read.emplace_back(in.until('\xff'));
    for (int i = 0; i < ((counts >> 4) & 3); ++i) r.protect.emplace_back(in.until('\xff'));

    bool valid = std::all_of(r.roots.begin(), r.roots.end(), writable_as_literal);
    for (const auto* list : {&r.deny_read, &r.protect})
        for (const auto& p : *list) valid = valid && !p.empty() && p.front() == '/' && writable_as_literal(p);
    const auto profile = confine::seatbelt::profile(r);
    require(profile.has_value() == valid, "a profile is made exactly when every path can be written", profile ? *profile : profile.error());
    if (!profile) return 0;

    Reader reader{*profile};
    std::vector<Node> forms;
    for (reader.space(); reader.at < profile->size(); reader.space()) forms.push_back(reader.node());
    auto has = [&](std::initializer_list<std::string_view> head, const std::string& path) {
        return std::any_of(forms.begin(), forms.end(), [&](const Node& f) { return is_rule(f, head, "subpath", path); });
    };
    for (const auto& root : r.roots) require(has({"allow", "file-write*"}, root), "a writable root reads back in its rule", root);
    for (const auto& d : r.deny_read)
        require(has({"deny", "file-read*", "file-link", "file-clone", "network-outbound"}, d), "an unreadable path reads back in its rule", d);
    for (const auto& k : r.protect) require(has({"deny", "file-write*", "file-link"}, k), "a protected path reads back in its rule", k);
    const bool denies_network = std::any_of(forms.begin(), forms.end(), [](const Node& f) {
        return f.items.size() == 2 && f.items[0].text == "deny" && f.items[1].text == "network*";
    });
    require(denies_network == r.network_none, "the network is denied exactly when the policy says none");
    return 0;
}
