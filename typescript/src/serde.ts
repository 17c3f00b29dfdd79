/**
 * `AgentStateSerializer`: LangGraph.js's JsonPlusSerializer (writes `json`, reads `json` and
 * `bytes`) that also reads `msgpack`, the format Python's LangGraph writes, so a thread written by
 * the Python saver reads as a CheckpointTuple here. Decoding follows Python's own msgpack-to-JSON
 * conversion (`langgraph.checkpoint.serde.jsonplus._msgpack_ext_hook_to_json`): a Python object is
 * its constructor's arguments (a UUID its string, a `Send` its node and arg), and a LangChain
 * message (a pydantic model of `langchain_core.messages`) becomes LangGraph.js's message class of
 * the same name, through the JSON reviver. Other pydantic models and dataclasses arrive as plain
 * objects of their fields; Python's `null` (None) and `bytearray` types are read too (`pickle` is
 * not). Writing is unchanged: JSON, which Python's serializer reads.
 */
import { ExtensionCodec, decode } from "@msgpack/msgpack";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";

const EXT_CONSTRUCTOR_SINGLE_ARG = 0;
const EXT_CONSTRUCTOR_POS_ARGS = 1;
const EXT_CONSTRUCTOR_KW_ARGS = 2;
const EXT_METHOD_SINGLE_ARG = 3;
const EXT_PYDANTIC_V1 = 4;
const EXT_PYDANTIC_V2 = 5;

const codec = new ExtensionCodec();
function unpack(data: Uint8Array): unknown {
  return decode(data, { extensionCodec: codec, useBigInt64: false, mapKeyConverter: (k) => String(k) });
}
for (const type of [EXT_CONSTRUCTOR_SINGLE_ARG, EXT_CONSTRUCTOR_POS_ARGS, EXT_CONSTRUCTOR_KW_ARGS, EXT_METHOD_SINGLE_ARG]) {
  codec.register({
    type,
    encode: () => null,
    decode: (data) => {
      const [module, name, arg] = unpack(data) as [string, string, unknown];
      if (type === EXT_CONSTRUCTOR_SINGLE_ARG && module === "uuid" && name === "UUID" && typeof arg === "string") {
        return `${arg.slice(0, 8)}-${arg.slice(8, 12)}-${arg.slice(12, 16)}-${arg.slice(16, 20)}-${arg.slice(20)}`;
      }
      if (type === EXT_CONSTRUCTOR_POS_ARGS && module === "langgraph.types" && name === "Send" && Array.isArray(arg)) {
        return { node: arg[0], args: arg[1] }; // as LangGraph.js's serializer writes a Send
      }
      return arg;
    },
  });
}
for (const type of [EXT_PYDANTIC_V1, EXT_PYDANTIC_V2]) {
  codec.register({
    type,
    encode: () => null,
    decode: (data) => {
      const [module, name, kwargs] = unpack(data) as [string, string, Record<string, unknown>];
      if (typeof module === "string" && module.startsWith("langchain_core.messages")) {
        // the serialized form LangGraph.js revives into its own message classes
        return { lc: 1, type: "constructor", id: ["langchain_core", "messages", name], kwargs };
      }
      return kwargs;
    },
  });
}

export class AgentStateSerializer extends JsonPlusSerializer {
  override async loadsTyped(type: string, data: Uint8Array | string): Promise<any> {
    if (type === "null") return null; // Python's None
    if (type === "bytearray") return super.loadsTyped("bytes", data);
    if (type !== "msgpack") return super.loadsTyped(type, data);
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    // through JSON, so that LangGraph.js's reviver builds the LangChain objects
    return super.loadsTyped("json", JSON.stringify(unpack(bytes)));
  }
}
