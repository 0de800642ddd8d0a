//! The line being searched, as Zobrist keys: the game history before the root, the root, and the
//! positions down to the node at hand. Only the part after the last zeroing move (capture or pawn
//! move) can repeat, so that is where [`Path::repeats`] looks.

/// Keys from the oldest history position to the current node.
pub(super) struct Path {
    keys: Vec<u64>,
    /// Index in `keys` of the first position after the last zeroing move.
    reversible_from: usize,
    /// Index of the search root in `keys` (`usize::MAX`: none, for a side search).
    root: usize,
}

/// What [`Path::push`] changed, for [`Path::pop`] to undo.
#[must_use]
pub(super) struct Pushed {
    reversible_from: usize,
}

impl Path {
    /// The history keys (oldest first) followed by the root's.
    pub(super) fn new(history: impl IntoIterator<Item = u64>, root: u64) -> Path {
        let mut keys: Vec<u64> = history.into_iter().collect();
        keys.push(root);
        Path {
            root: keys.len() - 1,
            keys,
            reversible_from: 0,
        }
    }

    /// A path of one position that is not the search root (a side search of that position).
    pub(super) fn detached(key: u64) -> Path {
        Path {
            keys: vec![key],
            reversible_from: 0,
            root: usize::MAX,
        }
    }

    /// Step to a child reached by a zeroing move or not.
    pub(super) fn push(&mut self, key: u64, zeroing: bool) -> Pushed {
        let saved = Pushed {
            reversible_from: self.reversible_from,
        };
        self.keys.push(key);
        if zeroing {
            self.reversible_from = self.keys.len() - 1;
        }
        saved
    }

    /// Step back to the parent.
    pub(super) fn pop(&mut self, pushed: Pushed) {
        self.keys.pop();
        self.reversible_from = pushed.reversible_from;
    }

    /// Is `key` on the reversible part of the path?
    pub(super) fn repeats(&self, key: u64) -> bool {
        self.keys[self.reversible_from..].contains(&key)
    }

    /// Is the current node the search root?
    pub(super) fn at_root(&self) -> bool {
        self.keys.len() - 1 == self.root
    }

    /// Plies from the search root to the current node.
    pub(super) fn depth(&self) -> usize {
        (self.keys.len() - 1).saturating_sub(self.root)
    }
}
