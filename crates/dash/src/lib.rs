//! dash: the Dashtable (temporary stand-in over hashbrown; the real segmented table replaces it with the same API).
use hashbrown::hash_table::{self, HashTable};

pub struct DashTable<T, H: Fn(&T) -> u64> {
    table: HashTable<T>,
    hasher: H,
}

pub enum Entry<'a, T, H: Fn(&T) -> u64> {
    Occupied(OccupiedEntry<'a, T, H>),
    Vacant(VacantEntry<'a, T, H>),
}

pub struct OccupiedEntry<'a, T, H: Fn(&T) -> u64> {
    inner: hash_table::OccupiedEntry<'a, T>,
    _h: std::marker::PhantomData<&'a H>,
}

pub struct VacantEntry<'a, T, H: Fn(&T) -> u64> {
    inner: hash_table::VacantEntry<'a, T>,
    _h: std::marker::PhantomData<&'a H>,
}

impl<'a, T, H: Fn(&T) -> u64> OccupiedEntry<'a, T, H> {
    pub fn get(&self) -> &T {
        self.inner.get()
    }
    pub fn get_mut(&mut self) -> &mut T {
        self.inner.get_mut()
    }
    pub fn into_mut(self) -> &'a mut T {
        self.inner.into_mut()
    }
    pub fn remove(self) -> T {
        self.inner.remove().0
    }
}

impl<'a, T, H: Fn(&T) -> u64> VacantEntry<'a, T, H> {
    pub fn insert(self, value: T) -> &'a mut T {
        self.inner.insert(value).into_mut()
    }
}

impl<T, H: Fn(&T) -> u64> DashTable<T, H> {
    pub fn with_hasher(hasher: H) -> Self {
        DashTable {
            table: HashTable::new(),
            hasher,
        }
    }
    pub fn len(&self) -> usize {
        self.table.len()
    }
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
    pub fn allocated_bytes(&self) -> usize {
        self.table.capacity() * (std::mem::size_of::<T>() + 1)
    }
    pub fn get(&self, hash: u64, eq: impl FnMut(&T) -> bool) -> Option<&T> {
        self.table.find(hash, eq)
    }
    pub fn get_mut(&mut self, hash: u64, eq: impl FnMut(&T) -> bool) -> Option<&mut T> {
        self.table.find_mut(hash, eq)
    }
    pub fn insert(&mut self, hash: u64, value: T, eq: impl FnMut(&T) -> bool) -> Option<T> {
        match self.table.find_mut(hash, eq) {
            Some(slot) => Some(std::mem::replace(slot, value)),
            None => {
                self.insert_unique(hash, value);
                None
            }
        }
    }
    pub fn insert_unique(&mut self, hash: u64, value: T) -> &mut T {
        let h = &self.hasher;
        self.table.insert_unique(hash, value, h).into_mut()
    }
    pub fn remove(&mut self, hash: u64, eq: impl FnMut(&T) -> bool) -> Option<T> {
        self.table.find_entry(hash, eq).ok().map(|e| e.remove().0)
    }
    pub fn entry(&mut self, hash: u64, eq: impl FnMut(&T) -> bool) -> Entry<'_, T, H> {
        let h = &self.hasher;
        match self.table.entry(hash, eq, h) {
            hash_table::Entry::Occupied(inner) => Entry::Occupied(OccupiedEntry {
                inner,
                _h: std::marker::PhantomData,
            }),
            hash_table::Entry::Vacant(inner) => Entry::Vacant(VacantEntry {
                inner,
                _h: std::marker::PhantomData,
            }),
        }
    }
    pub fn clear(&mut self) {
        self.table.clear()
    }
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.table.iter()
    }
    pub fn scan(&self, _cursor: u64, mut f: impl FnMut(&T)) -> u64 {
        self.table.iter().for_each(&mut f);
        0
    }
    pub fn scan_retain(&mut self, _cursor: u64, f: impl FnMut(&mut T) -> bool) -> u64 {
        self.table.retain(f);
        0
    }
    pub fn random(&self, seed: u64) -> Option<&T> {
        let n = self.table.len();
        if n == 0 {
            return None;
        }
        self.table.iter().nth((seed % n as u64) as usize)
    }
    pub fn for_each_with_prefix(&self, prefix: u64, bits: u32, mut f: impl FnMut(&T)) {
        for e in self.table.iter() {
            let h = (self.hasher)(e);
            if bits == 0 || h >> (64 - bits) == prefix {
                f(e)
            }
        }
    }
}
