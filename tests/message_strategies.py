"""Hypothesis strategies for conversations nobody here wrote: any dict may be a message.

Messages are built from the keys the contract knows (role, content,
tool_calls, name, tool_call_id) with values of every JSON type and some
that are not JSON at all, plus keys it does not know; roles are drawn
mostly from the valid ones so that many conversations get past structure.
"""

from __future__ import annotations

from hypothesis import strategies as st

ROLES = ["system", "user", "assistant", "tool"]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=6), st.binary(max_size=3)
)
anything = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.tuples(inner), st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=5,
)
names = st.one_of(st.sampled_from(["a", "b", "get_exchange_rate"]), anything)
function = st.one_of(
    st.fixed_dictionaries(
        {}, optional={"name": names, "arguments": st.one_of(st.just({}), st.just("{}"), anything)}
    ),
    anything,
)
tool_call = st.one_of(
    st.fixed_dictionaries(
        {"function": function},
        optional={"type": st.one_of(st.just("function"), anything), "id": st.one_of(st.text(max_size=4), anything)},
    ),
    anything,
)
message = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "role": st.one_of(st.sampled_from(ROLES), anything),
            "content": st.one_of(st.text(max_size=8), st.none(), anything),
            "tool_calls": st.one_of(st.lists(tool_call, max_size=3), anything),
            "name": names,
            "tool_call_id": st.one_of(st.text(max_size=4), anything),
            "extra": anything,
        },
    ),
    anything,
)
conversations = st.one_of(st.lists(message, max_size=8), anything)
