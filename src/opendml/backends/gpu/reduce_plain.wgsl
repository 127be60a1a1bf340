// REDUCE state of the functions whose accumulator is one value of the computation type CT: MULTIPLY on floats
// (a float32 product), and SUM, MULTIPLY, L1 and SUM_SQUARE on integers, which wrap around in the output's type
// exactly as the CPU's 64-bit accumulation truncated to that type does (sums and products modulo 2^bits).
// Placeholders: CT, IDENTITY, TERM (an expression of v), COMBINE (an expression of a and b), OUT, RAW_OUT.
alias State = {CT};

fn state_identity() -> State { return {IDENTITY}; }

fn state_term(v: State) -> State { return {TERM}; }

fn state_combine(a: State, b: State) -> State { return {COMBINE}; }

fn state_add(s: State, e: u32, r: u32) -> State { return state_combine(s, state_term(load_x(e))); }

fn state_finish(s: State) -> {RAW_OUT} { return to_raw_{OUT}(s); }
