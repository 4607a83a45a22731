// Reads chat-template jobs as JSON lines on stdin and answers each with how
// llama.cpp's chat layer reads the job's reply. Written for templatestudio's
// comparison bench (bench/llamacpp/compare.py); it links llama.cpp's
// "common" library and calls only functions declared in common/chat.h.
//
// A job:    {"template": "...", "tools": [openai tools], "reply": "...",
//            "messages": [openai messages], "prompt": "...", "debug": false}
//            (the last three optional: prompt is the text the reply continues,
//            see apply_matching; debug has llama.cpp's parser print its trace
//            on stderr)
// An answer: {"calls": [{"name": ..., "arguments": "<text>"}], "content": ...,
//            "reasoning": ..., "format": ..., "generation_prompt": ..., "stage": ...,
//            "thinking_start_tag": ..., "thinking_end_tags": [...],
//            "enable_thinking": ..., "server_enable_thinking": ...,
//            "prompt_matches": ..., "error": null|"..."}
//
// Each job goes through the steps a llama-server started with the template
// as --chat-template and default flags would take for one request:
// init the templates (no model, so bos/eos are empty), apply them with the
// tools, tool_choice auto and a generation prompt (enable_thinking as the
// server decides it, unless the job's prompt says otherwise: apply_matching;
// reasoning format "deepseek", the server's default), then parse the reply as a
// finished (non-partial) message with the parser the apply step built.
// "stage" names the last step reached, so an error says where it came from.
//
// Not handled: streaming (partial) parses, grammars (not exercised: no
// sampling happens here), templates that need a model's vocabulary.

#include "chat.h"
#include "json.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>

namespace {

// The probe's clock (2024-07-26 12:00 UTC), so dates a template prints do
// not change from one run to the next.
std::chrono::system_clock::time_point fixed_now() {
    return std::chrono::system_clock::from_time_t(1721995200);
}

common_json default_messages() {
    common_json messages = common_json::array();
    messages.push_back({{"role", "user"}, {"content", "Please run the tool."}});
    return messages;
}

bool ends_with(const std::string & text, const std::string & suffix) {
    return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Applies the templates as the server would, enable_thinking first as the
// server decides it (on where the template supports thinking). When the job
// carries the prompt its reply continues ("prompt"), a generation prompt that
// is not that prompt's tail means the reply was written after another prompt:
// the opposite enable_thinking is tried, and kept when its generation prompt
// fits. answer gets "enable_thinking", "server_enable_thinking" (the server's
// choice) and "prompt_matches" (null: no prompt).
common_chat_params apply_matching(const common_chat_templates * tmpls, common_chat_templates_inputs & inputs,
                                  const common_json & job, common_json & answer) {
    bool server_default = true;
    try {
        server_default = common_chat_templates_support_enable_thinking(tmpls);
    } catch (const std::exception &) {
        // the apply below meets the same template and reports its error
    }
    answer["server_enable_thinking"] = server_default;
    const bool has_prompt = job.contains("prompt") && job.at("prompt").is_string();
    const std::string prompt = has_prompt ? job.at("prompt").get<std::string>() : "";

    common_chat_params first;
    std::string first_error;
    bool have_first = false;
    for (bool thinking : {server_default, !server_default}) {
        inputs.enable_thinking = thinking;
        common_chat_params params;
        try {
            params = common_chat_templates_apply(tmpls, inputs);
        } catch (const std::exception & e) {
            if (first_error.empty() && !have_first) {
                first_error = e.what();
            }
            continue;
        }
        if (!has_prompt || ends_with(prompt, params.generation_prompt)) {
            answer["enable_thinking"] = thinking;
            answer["prompt_matches"]  = has_prompt ? common_json(true) : common_json(nullptr);
            return params;
        }
        if (!have_first) {
            first = params;
            have_first = true;
            answer["enable_thinking"] = thinking;
        }
    }
    if (!have_first) {
        throw std::runtime_error(first_error);
    }
    answer["prompt_matches"] = false;
    return first;
}

common_json answer_job(const common_json & job) {
    common_json answer = common_json::object();
    answer["calls"]     = common_json::array();
    answer["content"]   = "";
    answer["reasoning"] = "";
    answer["format"]    = nullptr;
    answer["error"]     = nullptr;
    std::string stage   = "init";
    try {
        const std::string source = job.at("template").get<std::string>();
        common_chat_templates_ptr tmpls;
        try {
            tmpls = common_chat_templates_init(/* model= */ nullptr, source);
        } catch (const std::exception &) {
            // init rethrows a copy sliced to std::exception, which says nothing;
            // building the template on its own gives the parser's own message
            common_chat_template alone(source, "", "");
            throw;
        }

        stage = "apply";
        common_chat_templates_inputs inputs;
        inputs.messages = common_chat_msgs_parse_oaicompat(
            job.contains("messages") ? job.at("messages") : default_messages());
        inputs.tools = common_chat_tools_parse_oaicompat(
            job.contains("tools") ? job.at("tools") : common_json::array());
        inputs.tool_choice           = COMMON_CHAT_TOOL_CHOICE_AUTO;
        inputs.add_generation_prompt = true;
        inputs.reasoning_format      = COMMON_REASONING_FORMAT_DEEPSEEK;
        inputs.now                   = fixed_now();
        inputs.parallel_tool_calls   = common_chat_templates_get_caps(tmpls.get())["supports_parallel_tool_calls"];
        common_chat_params params    = apply_matching(tmpls.get(), inputs, job, answer);
        answer["format"]             = common_chat_format_name(params.format);
        answer["generation_prompt"]  = params.generation_prompt;
        answer["thinking_start_tag"] = params.thinking_start_tag;
        answer["thinking_end_tags"]  = params.thinking_end_tags;

        stage = "parse";
        common_chat_parser_params parser_params(params);
        parser_params.reasoning_format = inputs.reasoning_format;
        parser_params.parse_tool_calls = true;
        parser_params.debug            = job.contains("debug") && job.at("debug").get<bool>();
        if (!params.parser.empty()) {
            parser_params.parser.load(params.parser);
        }
        const std::string reply = job.at("reply").get<std::string>();
        common_chat_msg msg = common_chat_parse(reply, /* is_partial= */ false, parser_params);

        stage = "done";
        for (const auto & call : msg.tool_calls) {
            answer["calls"].push_back({{"name", call.name}, {"arguments", call.arguments}});
        }
        answer["content"]   = msg.content;
        answer["reasoning"] = msg.reasoning_content;
    } catch (const std::exception & e) {
        answer["error"] = std::string(e.what());
    } catch (...) {
        answer["error"] = std::string("unknown exception");
    }
    answer["stage"] = stage;
    return answer;
}

}  // namespace

int main() {
    // llama.cpp's log writes some levels to stdout: keep stdout for answers
    // only, and send everything else to stderr.
    int answers_fd = dup(STDOUT_FILENO);
    dup2(STDERR_FILENO, STDOUT_FILENO);
    FILE * answers = fdopen(answers_fd, "w");
    if (answers == nullptr) {
        std::perror("fdopen");
        return 2;
    }

    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) {
            continue;
        }
        common_json answer;
        try {
            answer = answer_job(common_json::parse(line));
        } catch (const std::exception & e) {
            answer = common_json::object();
            answer["calls"] = common_json::array();
            answer["error"] = std::string("bad job line: ") + e.what();
            answer["stage"] = "read";
        }
        const std::string text = answer.dump_safe();
        std::fputs(text.c_str(), answers);
        std::fputc('\n', answers);
        std::fflush(answers);
    }
    return 0;
}
