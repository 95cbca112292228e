#include "vtk_series_reading.hpp"

#include <stdexcept>

#include <vtkCallbackCommand.h>
#include <vtkCommand.h>
#include <vtkXMLDataElement.h>
#include <vtkXMLUnstructuredGridReader.h>
#include <vtkXMLUtilities.h>

namespace cholsim::apps::testing {
namespace {

/// VTK reports reader failures as ErrorEvents (printed, not thrown); this counts them so that a
/// truncated or corrupt file fails the check instead of yielding an empty grid.
void count_error(vtkObject*, unsigned long, void* client_data, void*) {
  ++*static_cast<int*>(client_data);
}

}  // namespace

std::vector<CollectionEntry> read_collection(const std::filesystem::path& pvd) {
  vtkSmartPointer<vtkXMLDataElement> root;
  root.TakeReference(vtkXMLUtilities::ReadElementFromFile(pvd.string().c_str()));
  if (!root) throw std::runtime_error(pvd.string() + ": not readable as XML");
  const char* type = root->GetAttribute("type");
  if (std::string(root->GetName()) != "VTKFile" || type == nullptr || std::string(type) != "Collection") {
    throw std::runtime_error(pvd.string() + ": the root is not <VTKFile type=\"Collection\">");
  }
  vtkXMLDataElement* collection = root->FindNestedElementWithName("Collection");
  if (collection == nullptr) throw std::runtime_error(pvd.string() + ": no <Collection> element");

  std::vector<CollectionEntry> entries;
  for (int i = 0; i < collection->GetNumberOfNestedElements(); ++i) {
    vtkXMLDataElement* data_set = collection->GetNestedElement(i);
    if (std::string(data_set->GetName()) != "DataSet") continue;
    CollectionEntry entry;
    const char* file = data_set->GetAttribute("file");
    if (file == nullptr || data_set->GetScalarAttribute("timestep", entry.time) == 0) {
      throw std::runtime_error(pvd.string() + ": DataSet " + std::to_string(entries.size()) +
                               " lacks its timestep or file attribute");
    }
    entry.file = pvd.parent_path() / file;
    entries.push_back(entry);
  }
  return entries;
}

vtkSmartPointer<vtkUnstructuredGrid> read_unstructured_grid(const std::filesystem::path& vtu) {
  if (!std::filesystem::is_regular_file(vtu)) throw std::runtime_error(vtu.string() + ": no such file");
  auto reader = vtkSmartPointer<vtkXMLUnstructuredGridReader>::New();
  int errors = 0;
  auto observer = vtkSmartPointer<vtkCallbackCommand>::New();
  observer->SetCallback(count_error);
  observer->SetClientData(&errors);
  reader->AddObserver(vtkCommand::ErrorEvent, observer);
  reader->SetParserErrorObserver(observer);
  reader->SetFileName(vtu.string().c_str());
  reader->Update();
  if (errors > 0 || reader->GetErrorCode() != 0) {
    throw std::runtime_error(vtu.string() + ": vtkXMLUnstructuredGridReader reported an error");
  }
  vtkSmartPointer<vtkUnstructuredGrid> grid = reader->GetOutput();
  return grid;
}

}  // namespace cholsim::apps::testing
