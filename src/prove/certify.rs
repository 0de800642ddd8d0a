//! The certificate of a disproof: evidence that the prover cannot win from the root, built from
//! the table's disproofs but not trusting them.
//!
//! From the root, the disproved entries of the table are followed (every move at OR nodes, the
//! disproved replies at AND nodes) and the largest subset closed under "every prover move stays
//! in the set or fails at a leaf; some defender reply does" is computed (a greatest fixed point).
//! If the root is in it, the defender can keep every game inside the set for ever or end it at a
//! leaf that is not a win for the prover, so the prover cannot win; cycles in the set are endless
//! play, not wins. Positions the table left open are settled by a search of their own on the way.

use super::ProveError;
use super::dfpn::{Leaf, Searcher};
use super::hash;
use crate::rules::{Color, Position};
use std::collections::{HashMap, HashSet};

/// Most positions a certificate may have (beyond it the search answers `unknown`).
const MAX_POSITIONS: usize = 20_000_000;

/// What came of a certificate.
pub(super) enum Certificate {
    /// The root stays in the set: the prover cannot win. The size of the set.
    Holds(usize),
    /// The root left the set: the keys of the positions that were removed (their disproofs in
    /// the table are not to be trusted). Empty when the budget or the size limit ended it.
    Broken(Vec<u64>),
}

/// A position of the certificate.
struct Member {
    or: bool,
    /// An AND node with a reply that fails at a leaf: safe whatever happens to its children.
    anchored: bool,
    /// Removed from the set.
    out: bool,
    /// AND nodes: children still in the set.
    live: u32,
    /// AND nodes: replies not yet settled, tried when the live ones run out.
    open: Vec<(Position, u64)>,
}

/// A certificate under construction.
struct Builder<'s, 'a> {
    searcher: &'s mut Searcher<'a>,
    prover: Color,
    /// Keys of the game history before the root: coming back to one is a repetition.
    history: HashSet<u64>,
    index: HashMap<u64, u32>,
    members: Vec<Member>,
    parents: Vec<Vec<u32>>,
    /// Members whose children are still to be looked at.
    todo: Vec<(u32, Position)>,
    /// Members just removed, whose parents are still to be told.
    removed: Vec<u32>,
}

/// Certify that `searcher.prover` cannot win from `root`: build the set of disproved positions
/// around the root and shrink it to its greatest closed subset, settling positions the table
/// left open on the way.
pub(super) fn certify(
    searcher: &mut Searcher,
    root: &Position,
    history: &[Position],
) -> Result<Certificate, ProveError> {
    let prover = searcher.prover;
    let mut b = Builder {
        searcher,
        prover,
        history: history.iter().map(hash::key).collect(),
        index: HashMap::new(),
        members: Vec::new(),
        parents: Vec::new(),
        todo: Vec::new(),
        removed: Vec::new(),
    };
    b.member(*root, hash::key(root));
    loop {
        while let Some((id, pos)) = b.todo.pop() {
            if b.members.len() > MAX_POSITIONS || b.searcher.aborted {
                return Ok(Certificate::Broken(Vec::new()));
            }
            b.expand(id, &pos)?;
        }
        if b.removed.is_empty() {
            break;
        }
        // Greatest fixed point: an OR node goes with any child, an AND node with its last.
        while let Some(id) = b.removed.pop() {
            for p in std::mem::take(&mut b.parents[id as usize]) {
                let n = &mut b.members[p as usize];
                if n.out {
                    continue;
                }
                if n.or {
                    b.remove(p);
                    continue;
                }
                n.live -= 1;
                if n.live == 0 && !n.anchored && !b.revive(p)? {
                    b.remove(p);
                }
            }
        }
    }
    Ok(if b.members[0].out {
        Certificate::Broken(
            b.index
                .iter()
                .filter(|&(_, &j)| b.members[j as usize].out)
                .map(|(&k, _)| k)
                .collect(),
        )
    } else {
        Certificate::Holds(b.members.iter().filter(|n| !n.out).count())
    })
}

impl Builder<'_, '_> {
    /// The member of `pos`, added (and queued) if new.
    fn member(&mut self, pos: Position, key: u64) -> u32 {
        if let Some(&j) = self.index.get(&key) {
            return j;
        }
        let j = self.members.len() as u32;
        self.index.insert(key, j);
        self.members.push(Member {
            or: pos.turn() == self.prover,
            anchored: false,
            out: false,
            live: 0,
            open: Vec::new(),
        });
        self.parents.push(Vec::new());
        self.todo.push((j, pos));
        j
    }

    fn link(&mut self, parent: u32, child: u32) {
        self.parents[child as usize].push(parent);
        self.members[parent as usize].live += 1;
    }

    fn remove(&mut self, id: u32) {
        self.members[id as usize].out = true;
        self.removed.push(id);
    }

    /// Look at the children of member `id`.
    fn expand(&mut self, id: u32, pos: &Position) -> Result<(), ProveError> {
        let or = self.members[id as usize].or;
        let mut children: Vec<(Position, u64)> = Vec::new();
        for m in pos.legal_moves().iter() {
            let child = pos.after(m);
            let ck = hash::key(&child);
            // Coming back to the game before the root is a repetition: not a win.
            let fails = self.history.contains(&ck)
                || match self.searcher.leaf(&child)? {
                    Leaf::Failed => true,
                    Leaf::Won(_) if or => {
                        self.remove(id);
                        return Ok(());
                    }
                    Leaf::Won(_) => continue,
                    Leaf::Open(_) => false,
                };
            if fails {
                self.members[id as usize].anchored |= !or;
                continue;
            }
            if let Some(&j) = self.index.get(&ck) {
                if self.members[j as usize].out {
                    if or {
                        self.remove(id);
                        return Ok(());
                    }
                } else {
                    children.push((child, ck));
                }
                continue;
            }
            match self.searcher.entry(ck) {
                Some(e) if e.dn == 0 => children.push((child, ck)),
                Some(e) if e.pn == 0 && or => {
                    self.remove(id);
                    return Ok(());
                }
                Some(e) if e.pn == 0 => {}
                // Never searched, or left open (a repetition settled it in its parent's frame):
                // an OR node needs it now, an AND node perhaps later.
                _ if or => {
                    if self.searcher.settle(&child, ck)? == Some(true) {
                        children.push((child, ck));
                    } else {
                        self.remove(id);
                        return Ok(());
                    }
                }
                _ => self.members[id as usize].open.push((child, ck)),
            }
        }
        for (child, ck) in children {
            let j = self.member(child, ck);
            self.link(id, j);
        }
        let n = &self.members[id as usize];
        if !n.or && !n.anchored && n.live == 0 && !self.revive(id)? {
            self.remove(id);
        }
        Ok(())
    }

    /// An AND member without live children: settle its open replies until one is disproved.
    fn revive(&mut self, id: u32) -> Result<bool, ProveError> {
        while let Some((child, ck)) = self.members[id as usize].open.pop() {
            let usable = match self.index.get(&ck) {
                Some(&j) => !self.members[j as usize].out,
                None => self.searcher.settle(&child, ck)? == Some(true),
            };
            if usable {
                let j = self.member(child, ck);
                self.link(id, j);
                return Ok(true);
            }
        }
        Ok(false)
    }
}
