# bash completion for carbon                                    -*- shell-script -*-
#
# Install (either):
#   carbon completion bash > ~/.local/share/bash-completion/completions/carbon
#   echo 'source <(carbon completion bash)' >> ~/.bashrc
#
# Works with or without the bash-completion package. What to offer comes from
# `carbon __complete -- WORD... CURRENT`, which prints one candidate per line as
# VALUE or VALUE<TAB>DESCRIPTION, or the one line `:files` where a file name goes,
# and nothing at all on any error.

_carbon() {
    local -a words=()
    local i n word joined=0

    # Bash splits `--format=csv` into `--format`, `=`, `csv` (COMP_WORDBREAKS);
    # put such words back together so carbon sees what was typed.
    # (Plain indexes rather than words[-1]: this also runs in bash 3.2.)
    for ((i = 1; i <= COMP_CWORD; i++)); do
        word=${COMP_WORDS[i]}
        n=${#words[@]}
        if [[ $word == "=" ]] && ((n > 0)) && [[ ${words[n-1]} == -* && ${words[n-1]} != *=* ]]; then
            words[n-1]+="="
            joined=1
        elif ((joined)); then
            words[n-1]+=$word
            joined=0
        else
            words+=("$word")
        fi
    done
    local cur=${words[${#words[@]}-1]}

    local out
    out=$(command carbon __complete -- "${words[@]}" 2>/dev/null) || return 0

    # A `--option=` prefix is not part of the word bash replaces when `=` breaks words.
    local strip=""
    if [[ $cur == --*=* && $COMP_WORDBREAKS == *"="* ]]; then
        strip=${cur%%=*}=
    fi

    COMPREPLY=()
    local line value

    # A file name (`--from-csv FILE`): bash's own completion of paths, a slash after a directory.
    if [[ $out == ":files" ]]; then
        local prefix="" path=$cur
        if [[ $cur == --*=* ]]; then
            path=${cur#*=}
            prefix=${cur%%=*}=
        fi
        [[ -n $strip ]] && prefix=""
        compopt -o filenames 2>/dev/null
        while IFS= read -r line; do
            COMPREPLY+=("$prefix$line")
        done < <(compgen -f -- "$path")
        return 0
    fi

    # Bash puts a reply into the line as it is: quote each (`my\ prod`, `\$\(`), as zsh and fish
    # do, so a name with a space stays one word and one with `$(...)` is never code. What was
    # typed may be either form.
    local quoted
    while IFS= read -r line; do
        value=${line%%$'\t'*}
        [[ -n $value ]] || continue
        printf -v quoted '%q' "$value"
        [[ $value == "$cur"* || $quoted == "$cur"* ]] || continue
        COMPREPLY+=("${quoted#"$strip"}")
    done <<<"$out"
    return 0
}

complete -F _carbon carbon
